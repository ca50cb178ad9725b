package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// An upgrade the API server refuses (as the TKR resolver's webhook refuses a release the
// cluster cannot run) leaves the Cluster as it was, its TKR label included: the label comes with
// the topology's version in one write, to which the resolver adds it, never in a write of its
// own first, as TKG's was.
func TestRefusedUpgradeLeavesTheClusterUnchanged(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(topologyCluster(1)).WithInterceptorFuncs(interceptor.Funcs{
		// The webhook refuses the new version; any other write goes through.
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			if cl, ok := o.(*clusterv1.Cluster); ok && cl.Spec.Topology.Version == "v1.36.0+vmware.1" {
				return apierrors.NewForbidden(schema.GroupResource{Group: "cluster.x-k8s.io", Resource: "clusters"}, "wc",
					errString(`admission webhook "tkr-resolver-cluster-webhook.tanzu.vmware.com" denied the request: no TKR matches v1.36.0`))
			}
			return c.Patch(ctx, o, p, opts...)
		},
	}).Build()
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	err := RunUpgrade(t.Context(), c, key, &Upgrade{TKR: "v1.36.0---vmware.1-tkg.1", Version: "v1.36.0+vmware.1-tkg.1", Kubernetes: "v1.36.0+vmware.1"},
		time.Second, progress.ForWriter(&strings.Builder{}))
	if err == nil || !strings.Contains(err.Error(), "the upgrade was refused") || !strings.Contains(err.Error(), "denied the request") {
		t.Fatalf("want the refusal, got %v", err)
	}
	cl := &clusterv1.Cluster{}
	if err := c.Get(t.Context(), key, cl); err != nil {
		t.Fatal(err)
	}
	if cl.Labels[runv1alpha3.LabelTKR] != "v1.35.4---vmware.1-tkg.1" || cl.Spec.Topology.Version != "v1.35.4+vmware.1" {
		t.Errorf("after a refused upgrade: label %q, version %q", cl.Labels[runv1alpha3.LabelTKR], cl.Spec.Topology.Version)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// Just after an upgrade, the TKR service may not have rewritten the Cluster's UpdatesAvailable
// condition yet: the release the cluster is now on is no upgrade.
func TestPlanUpgradeSkipsTheCurrentRelease(t *testing.T) {
	cl := topologyCluster(1)
	conditions.Set(cl, metav1.Condition{Type: runv1alpha3.ConditionUpdatesAvailable, Status: metav1.ConditionTrue, Reason: "Available",
		Message: "[v1.35.4+vmware.1-tkg.1]"})
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(cl).Build()
	if _, err := PlanUpgrade(t.Context(), c, client.ObjectKeyFromObject(cl), ""); !IsNoUpgrades(err) {
		t.Errorf("a condition listing only the current release: want no available upgrades, got %v", err)
	}
	// Upgraded from v1.33 past v1.34: the condition written at v1.33 offers no downgrade.
	conditions.Set(cl, metav1.Condition{Type: runv1alpha3.ConditionUpdatesAvailable, Status: metav1.ConditionTrue, Reason: "Available",
		Message: "[v1.34.4+vmware.1-tkg.1 v1.35.4+vmware.1-tkg.1]"})
	c = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(cl).Build()
	if _, err := PlanUpgrade(t.Context(), c, client.ObjectKeyFromObject(cl), "v1.34"); err == nil || !strings.Contains(err.Error(), "no available upgrades") {
		t.Errorf("a condition listing older releases: want no available upgrades, got %v", err)
	}
}

// TestSelectOSImage: --os-name points every part of a vSphere cluster at another OS image, and is
// refused for a cluster whose nodes take none.
func TestSelectOSImage(t *testing.T) {
	c := topologyCluster(1, 1)
	c.Spec.Topology.ControlPlane.Metadata.Annotations = map[string]string{runv1alpha3.AnnotationResolveOSImage: "image-type=ova,os-name=ubuntu"}
	if err := selectOSImage(c, "image-type=ova,os-name=photon"); err != nil {
		t.Fatal(err)
	}
	for _, a := range []map[string]string{c.Spec.Topology.ControlPlane.Metadata.Annotations, c.Spec.Topology.Workers.MachineDeployments[0].Metadata.Annotations,
		c.Spec.Topology.Workers.MachineDeployments[1].Metadata.Annotations} {
		if a[runv1alpha3.AnnotationResolveOSImage] != "image-type=ova,os-name=photon" {
			t.Errorf("annotations %v", a)
		}
	}
	local := topologyCluster(1)
	local.Spec.InfrastructureRef.Kind = "LocalCluster"
	if err := selectOSImage(local, "image-type=ova,os-name=photon"); err == nil || !strings.Contains(err.Error(), "its infrastructure is LocalCluster") {
		t.Errorf("a local cluster: %v", err)
	}
}

// An upgrade whose wait stops has changed the cluster, whose controllers go on: its error says
// where to see it, after the step and the cause.
func TestStoppedUpgradeSaysWhereToSeeIt(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(topologyCluster(1)).Build()
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	err := RunUpgrade(t.Context(), c, key, &Upgrade{TKR: "v1.36.0---vmware.1-tkg.1", Version: "v1.36.0+vmware.1-tkg.1", Kubernetes: "v1.36.0+vmware.1"},
		10*time.Millisecond, progress.ForWriter(&strings.Builder{}))
	var se *progress.StepError
	if !errors.As(err, &se) || se.Step != "control plane" {
		t.Fatalf("want the control plane's wait to stop, got %v", err)
	}
	if want := "The upgrade to v1.36.0+vmware.1 is under way: the management cluster goes on rolling the machines.\nTo see where it is:\n    slipway cluster get wc -n default"; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("the error of a stopped upgrade does not end with its ways out:\n%v", err)
	}
}
