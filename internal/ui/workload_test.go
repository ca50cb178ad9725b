package ui

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/config"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// TestWorkloadInstaller is `slipway ui`: the management cluster's workload clusters listed with
// their release and packages (not the management cluster itself); the review's file beside the
// Cluster that `cluster create` converts it to, with that command; a deploy running the workload
// cluster's flow on the saved file, the host check's warnings in its log.
func TestWorkloadInstaller(t *testing.T) {
	wc := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc1", Labels: map[string]string{runv1alpha3.LabelTKR: "v1.35.4---vmware.1-tkg.1"}}}
	wc.Spec.Topology.Version = "v1.35.4+vmware.1"
	mc := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: tkg.SystemNamespace, Name: "mc", Labels: map[string]string{tkg.LabelManagementCluster: ""}}}
	cb := &runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc1"}, Spec: &runv1alpha3.ClusterBootstrapTemplateSpec{
		Kapp: &runv1alpha3.ClusterBootstrapPackage{RefName: "kapp-controller.tanzu.vmware.com.0.50.1"},
		CNI:  &runv1alpha3.ClusterBootstrapPackage{RefName: "antrea.tanzu.vmware.com.1.13.1"}}}
	cb.Status.Conditions = runv1alpha3.Conditions{{Type: "Antrea-ReconcileSucceeded", Status: corev1.ConditionTrue}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(wc, mc, cb).WithStatusSubresource(cb).Build()

	var ran cluster.CreateOptions
	create := func(_ context.Context, o cluster.CreateOptions) error {
		ran = o
		if err := o.CheckHost(o.Progress, 1, 2); err != nil {
			return err
		}
		o.Progress.Infof("creating workload cluster 'wc2'...")
		return nil
	}
	// The host check's warnings go to the page's log, with the flow's own lines.
	const warning = "fs.inotify.max_user_instances is 128: raised it to 1024"
	checkHost := func(p *progress.Printer, _, _ int) error {
		p.Infof("%s", warning)
		return nil
	}
	home := t.TempDir()
	// The environment overrides the wizard's file, as for `cluster create`: a site's copy.
	environ := []string{"TKG_CUSTOM_IMAGE_REPOSITORY=127.0.0.1:5001/tkg"}
	in := newInstallerWith(t, Options{Home: home, Now: time.Now, Workload: &Workload{Client: c, Create: create, CheckHost: checkHost, Environ: environ}})

	var clusters []listed
	in.call(t, http.MethodGet, "/api/clusters", nil, &clusters)
	// The fake management cluster holds no kubeconfig of wc1: its pods are not known.
	if len(clusters) != 1 || clusters[0].Name != "wc1" || clusters[0].TKR != "v1.35.4---vmware.1-tkg.1" || len(clusters[0].Packages) != 2 || clusters[0].Reached {
		t.Fatalf("the clusters listed: %+v", clusters)
	}
	states := map[string]string{}
	for _, p := range clusters[0].Packages {
		states[p.Name] = p.State
	}
	if states["antrea.tanzu.vmware.com.1.13.1"] != "reconciled" || states["kapp-controller.tanzu.vmware.com.0.50.1"] != "reconciling" {
		t.Errorf("the packages' states: %v", states)
	}

	vars := map[string]string{config.ClusterName: "wc2", config.InfrastructureProvider: "local", config.CNI: "calico"}
	var got reviewed
	if status := in.call(t, http.MethodPost, "/api/deploy", configRequest{Variables: vars}, &got); status != http.StatusAccepted {
		t.Fatalf("deploy: %d %+v", status, got)
	}
	want := filepath.Join(home, "clusterconfigs", "wc2.flat.yaml")
	if got.Path != want || got.Command != "slipway cluster create -f "+want {
		t.Errorf("the review's file %s and command %q", got.Path, got.Command)
	}
	lines, last := events(t, in, nil)
	if last.State != stateSucceeded || len(last.Next) == 0 || last.Next[0] != "slipway cluster get wc2" || lines[len(lines)-1] != "creating workload cluster 'wc2'..." ||
		!slices.Contains(lines, warning) {
		t.Errorf("the deploy: %+v\n%v", last, lines)
	}
	if ran.File != want || ran.Client != client.Client(c) || !slices.Equal(ran.Environ, environ) {
		t.Errorf("the flow ran on %s with client %v and environment %v", ran.File, ran.Client, ran.Environ)
	}
}
