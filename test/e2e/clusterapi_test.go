package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/packaging/template"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// TestClusterAPIOnLocalRuntime makes a bootstrap cluster with `--bootstrap` (clusterctl init from
// the local repository: cert-manager, Cluster API core, kubeadm bootstrap and control plane, the
// local infrastructure provider, each running as a component process), then a topology Cluster
// of the local ClusterClass: it becomes Available, scales its workers 1→2, upgrades from v1.34.3
// to v1.35.4 by rolling every machine, and its deletion leaves no process behind.
func TestClusterAPIOnLocalRuntime(t *testing.T) {
	start := time.Now()
	lc := createCluster(t, "e2e-capi", "--bootstrap")
	t.Logf("bootstrap-ready (cluster and providers) after %s", time.Since(start).Round(100*time.Millisecond))
	ctx := t.Context()
	t.Cleanup(func() {
		if t.Failed() {
			for _, ns := range []string{"capi-system", "capi-kubeadm-control-plane-system", "capl-system", "default"} {
				dumpPods(t, lc, ns)
			}
		}
	})

	// The bootstrap payload of seeds/000, every pod a running process, not a simulation.
	want := map[string][]string{
		"cert-manager":                      {"cert-manager-", "cert-manager-cainjector-", "cert-manager-webhook-"},
		"capi-system":                       {"capi-controller-manager-"},
		"capi-kubeadm-bootstrap-system":     {"capi-kubeadm-bootstrap-controller-manager-"},
		"capi-kubeadm-control-plane-system": {"capi-kubeadm-control-plane-controller-manager-"},
		"capl-system":                       {"capl-controller-manager-"},
	}
	for ns, prefixes := range want {
		pods := &corev1.PodList{}
		if err := lc.client.List(ctx, pods, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, prefix := range prefixes {
			found := false
			for _, p := range pods.Items {
				// A Deployment's pod is <deployment>-<replica set hash>-<pod hash>.
				ofDeployment := strings.HasPrefix(p.Name, prefix) && strings.Count(strings.TrimPrefix(p.Name, prefix), "-") == 1
				found = found || ofDeployment && p.Status.Phase == corev1.PodRunning && p.Annotations["local.slipway.dev/simulated"] == ""
			}
			if !found {
				t.Errorf("no running, not simulated pod %s* in %s", prefix, ns)
			}
		}
	}
	// clusterctl's inventory lists every provider.
	providers := &unstructured.UnstructuredList{}
	providers.SetAPIVersion("clusterctl.cluster.x-k8s.io/v1alpha3")
	providers.SetKind("ProviderList")
	if err := lc.client.List(ctx, providers); err != nil {
		t.Fatal(err)
	}
	var inventory []string
	for _, p := range providers.Items {
		inventory = append(inventory, p.GetNamespace()+"/"+p.GetName())
	}
	if got := strings.Join(inventory, ","); got != "capi-kubeadm-bootstrap-system/bootstrap-kubeadm,capi-kubeadm-control-plane-system/control-plane-kubeadm,capi-system/cluster-api,capl-system/infrastructure-local" {
		t.Errorf("provider inventory: %s", got)
	}

	// The ClusterClass from packages/tkg-clusterclass, rendered with its default values.
	for _, obj := range renderPackage(t, "tkg-clusterclass.tanzu.vmware.com/0.1.0") {
		if err := lc.client.Create(ctx, obj); err != nil {
			t.Fatalf("create %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	wc := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc"}}
	wc.Spec.Topology = clusterv1.Topology{
		ClassRef:     clusterv1.ClusterClassRef{Name: "tkg-local-default-v1.0.0"},
		Version:      "v1.34.3",
		ControlPlane: clusterv1.ControlPlaneTopology{Replicas: ptr.To[int32](1)},
		Workers: clusterv1.WorkersTopology{MachineDeployments: []clusterv1.MachineDeploymentTopology{
			{Class: "tkg-worker", Name: "md-0", Replicas: ptr.To[int32](1)},
		}},
	}
	created := time.Now()
	if err := lc.client.Create(ctx, wc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "the workload cluster Available", func() error {
		return clusterAvailable(ctx, lc, wc, "v1.34.3", 2)
	})
	t.Logf("workload cluster Available after %s", time.Since(created).Round(100*time.Millisecond))

	// Its kubeconfig Secret reaches it, and every node is Ready at the version.
	checkNodes(t, lc, wc, "v1.34.3", 2)

	// Scale the workers 1→2.
	scaled := time.Now()
	patchTopology(t, lc, wc, func(c *clusterv1.Cluster) { c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr.To[int32](2) })
	eventually(t, 3*time.Minute, "two workers", func() error { return clusterAvailable(ctx, lc, wc, "v1.34.3", 3) })
	t.Logf("scaled to two workers in %s", time.Since(scaled).Round(100*time.Millisecond))

	// Upgrade: every machine is replaced by one of v1.35.4.
	upgraded := time.Now()
	patchTopology(t, lc, wc, func(c *clusterv1.Cluster) { c.Spec.Topology.Version = "v1.35.4" })
	eventually(t, 8*time.Minute, "the upgrade to v1.35.4", func() error { return clusterAvailable(ctx, lc, wc, "v1.35.4", 3) })
	t.Logf("upgraded to v1.35.4 in %s", time.Since(upgraded).Round(100*time.Millisecond))
	checkNodes(t, lc, wc, "v1.35.4", 3)

	// Deletion stops every node and the load balancer and removes the cluster's state.
	deleted := time.Now()
	if err := lc.client.Delete(ctx, wc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "the workload cluster deleted", func() error {
		if err := lc.client.Get(ctx, client.ObjectKeyFromObject(wc), &clusterv1.Cluster{}); err == nil {
			return fmt.Errorf("cluster %s still exists", wc.Name)
		}
		return nil
	})
	t.Logf("deleted in %s", time.Since(deleted).Round(100*time.Millisecond))
	wcDir := filepath.Join(filepath.Dir(lc.dirs.Root), wc.Name)
	if pids := proc.Mentioning(wcDir); len(pids) > 0 {
		t.Errorf("processes of the deleted cluster still run: %v", pids)
	}
	if _, err := os.Stat(wcDir); err == nil {
		t.Errorf("the deleted cluster's state %s is left", wcDir)
	}
}

// clusterAvailable checks the Cluster is Available with every machine at the version, Ready,
// with a NodeRef, and the control plane's etcd and components healthy.
func clusterAvailable(ctx context.Context, lc *localCluster, wc *clusterv1.Cluster, version string, machines int) error {
	c := &clusterv1.Cluster{}
	if err := lc.client.Get(ctx, client.ObjectKeyFromObject(wc), c); err != nil {
		return err
	}
	if !conditions.IsTrue(c, clusterv1.AvailableCondition) {
		return fmt.Errorf("cluster not Available: %s", conditions.GetMessage(c, clusterv1.AvailableCondition))
	}
	list := &clusterv1.MachineList{}
	if err := lc.client.List(ctx, list, client.InNamespace(wc.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: wc.Name}); err != nil {
		return err
	}
	if len(list.Items) != machines {
		return fmt.Errorf("%d machines, want %d", len(list.Items), machines)
	}
	for _, m := range list.Items {
		if m.Spec.Version != version || !m.Status.NodeRef.IsDefined() || !conditions.IsTrue(&m, clusterv1.MachineReadyCondition) {
			return fmt.Errorf("machine %s: version %s, node %q, ready %v", m.Name, m.Spec.Version, m.Status.NodeRef.Name, conditions.IsTrue(&m, clusterv1.MachineReadyCondition))
		}
	}
	kcps := &controlplanev1.KubeadmControlPlaneList{}
	if err := lc.client.List(ctx, kcps, client.InNamespace(wc.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: wc.Name}); err != nil {
		return err
	}
	if len(kcps.Items) != 1 {
		return fmt.Errorf("%d KubeadmControlPlanes", len(kcps.Items))
	}
	for _, cond := range []string{controlplanev1.KubeadmControlPlaneEtcdClusterHealthyCondition, controlplanev1.KubeadmControlPlaneControlPlaneComponentsHealthyCondition} {
		if !conditions.IsTrue(&kcps.Items[0], cond) {
			return fmt.Errorf("KubeadmControlPlane %s is not true: %s", cond, conditions.GetMessage(&kcps.Items[0], cond))
		}
	}
	return nil
}

// checkNodes reads the workload cluster through the kubeconfig Secret Cluster API wrote.
func checkNodes(t *testing.T, lc *localCluster, wc *clusterv1.Cluster, version string, count int) {
	t.Helper()
	secret := &corev1.Secret{}
	if err := lc.client.Get(t.Context(), client.ObjectKey{Namespace: wc.Namespace, Name: wc.Name + "-kubeconfig"}, secret); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["value"])
	if err != nil {
		t.Fatal(err)
	}
	wcc, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the workload cluster's nodes", func() error {
		nodes := &corev1.NodeList{}
		if err := wcc.List(t.Context(), nodes); err != nil {
			return err
		}
		if len(nodes.Items) != count {
			return fmt.Errorf("%d nodes, want %d", len(nodes.Items), count)
		}
		for _, n := range nodes.Items {
			ready := false
			for _, c := range n.Status.Conditions {
				ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
			}
			if !ready || n.Status.NodeInfo.KubeletVersion != version || !strings.HasPrefix(n.Spec.ProviderID, "local://default/") {
				return fmt.Errorf("node %s: ready %v, version %s, providerID %s", n.Name, ready, n.Status.NodeInfo.KubeletVersion, n.Spec.ProviderID)
			}
		}
		return nil
	})
}

func patchTopology(t *testing.T, lc *localCluster, wc *clusterv1.Cluster, change func(*clusterv1.Cluster)) {
	t.Helper()
	c := &clusterv1.Cluster{}
	if err := lc.client.Get(t.Context(), client.ObjectKeyFromObject(wc), c); err != nil {
		t.Fatal(err)
	}
	before := c.DeepCopy()
	change(c)
	if err := lc.client.Patch(t.Context(), c, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// renderPackage renders a package source of packages/ with its default values.
func renderPackage(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := template.RenderSource(t.Context(), filepath.Join(root, "packages", dir))
	if err != nil {
		t.Fatal(err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(out)), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := decoder.Decode(&u.Object); err != nil {
			break
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}
