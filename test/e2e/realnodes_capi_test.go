package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/vm"
)

// checkRealNodesFromClusterAPI makes a workload cluster of real nodes through Cluster API (the
// Cluster annotated for them, on the local ClusterClass): each machine's node is a node of
// namespaces that executes the bootstrap data Cluster API's kubeadm bootstrap provider wrote,
// kubeadm init and join for real, from the release's images in the local registry. The cluster
// becomes Available with its etcd and control plane healthy as Cluster API's control-plane
// provider reads them; the nodes are the real kubelet's, on containerd; kubeadm's own control
// plane, kube-proxy and CoreDNS run, and the release's add-on packages reconcile with
// metrics-server really running; exec reaches a pod through the API server. Deleting the Cluster
// leaves no node of namespaces behind.
func checkRealNodesFromClusterAPI(t *testing.T, lc *localCluster) {
	ctx := t.Context()
	before := vm.OnHost()
	store := cluster.Store{Root: filepath.Dir(lc.dirs.Root)}
	wc := localTopologyCluster("e2e-real", "v1.35.4")
	wc.Annotations = map[string]string{infrav1.NodeRuntimeAnnotation: infrav1.NodeRuntimeReal}
	// TKG's CLUSTER_CIDR and SERVICE_CIDR: the controller manager gives each node its pod CIDR
	// from the first.
	wc.Spec.ClusterNetwork = clusterv1.ClusterNetwork{
		Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"100.96.0.0/11"}},
		Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"100.64.0.0/13"}},
	}
	// Without the Cluster's pod CIDRs, the provider refuses, naming the field and its fix.
	bad := wc.DeepCopy()
	bad.Name, bad.Spec.ClusterNetwork = "e2e-nocidr", clusterv1.ClusterNetwork{}
	if err := lc.client.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the provider refusing real nodes without pod CIDRs", func() error {
		c := &clusterv1.Cluster{}
		if err := lc.client.Get(ctx, client.ObjectKeyFromObject(bad), c); err != nil {
			return err
		}
		lcs := &infrav1.LocalClusterList{}
		if err := lc.client.List(ctx, lcs, client.InNamespace(bad.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: bad.Name}); err != nil {
			return err
		}
		for _, l := range lcs.Items {
			if msg := conditions.GetMessage(&l, infrav1.ReadyCondition); strings.Contains(msg, "spec.clusterNetwork.pods.cidrBlocks, which their pod network is made of, and Cluster default/e2e-nocidr has none") &&
				strings.Contains(msg, "100.96.0.0/11") {
				return nil
			}
		}
		return fmt.Errorf("no LocalCluster of %s says what is missing", bad.Name)
	})
	if err := lc.client.Delete(ctx, bad); err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() {
		if t.Failed() {
			if dirs, err := store.Dirs(wc.Name); err == nil {
				dumpRealNodeLogs(t, dirs)
			}
			dumpPods(t, lc, "capl-system")
		}
	})
	created := time.Now()
	if err := lc.client.Create(ctx, wc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 6*time.Minute, "the cluster of real nodes Available", func() error {
		return clusterAvailable(ctx, lc, wc, "v1.35.4+vmware.1", 2)
	})
	t.Logf("workload cluster of real nodes Available after %s", time.Since(created).Round(100*time.Millisecond))
	// The release's packages, installed through the ClusterBootstrap by kapp-controller, which
	// runs on the real nodes and fetches them from the local registry.
	checkAddons(t, lc, wc, "v1.35.4---vmware.1-tkg.1")
	t.Logf("its add-on packages reconciled after %s", time.Since(created).Round(100*time.Millisecond))

	// The nodes are the real kubelet's on containerd, registered with their machines'
	// providerIDs, on the bridge.
	wcc := workloadClient(t, lc, wc)
	machines := &clusterv1.MachineList{}
	if err := lc.client.List(ctx, machines, client.InNamespace(wc.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: wc.Name}); err != nil {
		t.Fatal(err)
	}
	nodes := &corev1.NodeList{}
	if err := wcc.List(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != len(machines.Items) {
		t.Errorf("%d nodes for %d machines", len(nodes.Items), len(machines.Items))
	}
	var controlPlane string
	for _, n := range nodes.Items {
		info := n.Status.NodeInfo
		if !strings.HasPrefix(info.ContainerRuntimeVersion, "containerd://") || info.KubeletVersion != "v1.35.4+vmware.1" {
			t.Errorf("node %s runs %s and kubelet %s, want containerd and the real kubelet v1.35.4+vmware.1", n.Name, info.ContainerRuntimeVersion, info.KubeletVersion)
		}
		if n.Spec.ProviderID != infrav1.ProviderIDPrefix+wc.Namespace+"/"+n.Name {
			t.Errorf("node %s has providerID %q, want its machine's", n.Name, n.Spec.ProviderID)
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && !strings.HasPrefix(a.Address, "198.18.") {
				t.Errorf("node %s has InternalIP %s, not on the bridge", n.Name, a.Address)
			}
		}
		if _, ok := n.Labels["node-role.kubernetes.io/control-plane"]; ok {
			controlPlane = n.Name
		}
	}

	// kubeadm's own: its configuration names the release's images, and its control plane,
	// kube-proxy and CoreDNS run from them, none simulated.
	kubeadmConfig := &corev1.ConfigMap{}
	if err := wcc.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "kubeadm-config"}, kubeadmConfig); err != nil {
		t.Fatal(err)
	}
	if cc := kubeadmConfig.Data["ClusterConfiguration"]; !strings.Contains(cc, "imageRepository: projects.registry.vmware.com/tkg") {
		t.Errorf("kubeadm-config does not name the release's image repository:\n%s", cc)
	}
	eventually(t, 2*time.Minute, "kubeadm's pods running", func() error {
		pods := &corev1.PodList{}
		if err := wcc.List(ctx, pods, client.InNamespace("kube-system")); err != nil {
			return err
		}
		want := map[string]string{
			"kube-apiserver-" + controlPlane:          "projects.registry.vmware.com/tkg/kube-apiserver:v1.35.4_vmware.1",
			"etcd-" + controlPlane:                    "projects.registry.vmware.com/tkg/etcd:v3.6.5_vmware.2",
			"kube-controller-manager-" + controlPlane: "projects.registry.vmware.com/tkg/kube-controller-manager:v1.35.4_vmware.1",
			"kube-scheduler-" + controlPlane:          "projects.registry.vmware.com/tkg/kube-scheduler:v1.35.4_vmware.1",
			"kube-proxy-":                             "projects.registry.vmware.com/tkg/kube-proxy:v1.35.4_vmware.1",
			"coredns-":                                "projects.registry.vmware.com/tkg/coredns:v1.12.4_vmware.1",
			// The release's metrics-server package, its image locked by digest.
			"metrics-server-": "",
		}
		for prefix, image := range want {
			running := 0
			for _, p := range pods.Items {
				if !strings.HasPrefix(p.Name, prefix) {
					continue
				}
				if p.Status.Phase != corev1.PodRunning || image != "" && p.Spec.Containers[0].Image != image || p.Annotations["local.slipway.dev/simulated"] != "" {
					return fmt.Errorf("pod %s: %s, image %s, annotations %v", p.Name, p.Status.Phase, p.Spec.Containers[0].Image, p.Annotations)
				}
				running++
			}
			if running == 0 {
				return fmt.Errorf("no pod %s* runs", prefix)
			}
		}
		return nil
	})

	// exec reaches a container through the API server and the node's kubelet.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	secret := &corev1.Secret{}
	if err := lc.client.Get(ctx, client.ObjectKey{Namespace: wc.Namespace, Name: wc.Name + "-kubeconfig"}, secret); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeconfig, secret.Data["value"], 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, kubectlBin, "--kubeconfig", kubeconfig, "exec", "-n", "kube-system", "etcd-"+controlPlane, "--",
		"etcd", "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "etcd Version: 3.6.5") {
		t.Errorf("kubectl exec into etcd-%s: %v\n%s", controlPlane, err, out)
	}

	// Deleting the Cluster powers off and removes every node.
	deleteWorkloadCluster(t, lc, wc)
	checkNoRealNodeLeft(t, before)
}
