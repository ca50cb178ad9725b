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
	"github.com/slipway-dev/slipway/internal/assets"
)

// checkRefusesRealNodesWithoutPodCIDRs applies a Cluster of real nodes without pod CIDRs: the
// local provider refuses it, naming the field and its fix, and the Cluster is deleted.
func checkRefusesRealNodesWithoutPodCIDRs(t *testing.T, lc *localCluster) {
	ctx := t.Context()
	bad := localTopologyCluster("e2e-nocidr", "v1.35.4")
	bad.Spec.ClusterNetwork = clusterv1.ClusterNetwork{}
	if err := lc.client.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the provider refusing real nodes without pod CIDRs", func() error {
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
}

// checkRealNodesOf checks that a workload cluster made through Cluster API runs on real nodes:
// each machine's node is a node of namespaces that executed the bootstrap data Cluster API's
// kubeadm bootstrap provider wrote, kubeadm init and join for real, from the release's images in
// the local registry. The nodes are the real kubelet's on containerd, registered with their
// machines' providerIDs, on the bridge; kubeadm's own control plane, kube-proxy and CoreDNS run
// from the release's images, and so does the release's metrics-server package; exec reaches a
// pod through the API server.
func checkRealNodesOf(t *testing.T, lc *localCluster, wc *clusterv1.Cluster, version string) {
	ctx := t.Context()
	release, err := assets.ReleaseOf(version)
	if err != nil {
		t.Fatal(err)
	}
	kubelet := release.KubeadmVersion()
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
		if !strings.HasPrefix(info.ContainerRuntimeVersion, "containerd://") || info.KubeletVersion != kubelet {
			t.Errorf("node %s runs %s and kubelet %s, want containerd and the real kubelet %s", n.Name, info.ContainerRuntimeVersion, info.KubeletVersion, kubelet)
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
	if cc := kubeadmConfig.Data["ClusterConfiguration"]; !strings.Contains(cc, "imageRepository: "+assets.ImageRepository) {
		t.Errorf("kubeadm-config does not name the release's image repository:\n%s", cc)
	}
	tag := strings.ReplaceAll(kubelet, "+", "_")
	eventually(t, 2*time.Minute, "kubeadm's pods running", func() error {
		pods := &corev1.PodList{}
		if err := wcc.List(ctx, pods, client.InNamespace("kube-system")); err != nil {
			return err
		}
		want := map[string]string{
			"kube-apiserver-" + controlPlane:          assets.ImageRepository + "/kube-apiserver:" + tag,
			"etcd-" + controlPlane:                    assets.ImageRepository + "/etcd:" + release.EtcdTag,
			"kube-controller-manager-" + controlPlane: assets.ImageRepository + "/kube-controller-manager:" + tag,
			"kube-scheduler-" + controlPlane:          assets.ImageRepository + "/kube-scheduler:" + tag,
			"kube-proxy-":                             assets.ImageRepository + "/kube-proxy:" + tag,
			"coredns-":                                assets.ImageRepository + "/coredns:" + release.CoreDNSTag,
			// The release's metrics-server package, its image locked by digest.
			"metrics-server-": "",
		}
		for prefix, image := range want {
			running := 0
			for _, p := range pods.Items {
				if !strings.HasPrefix(p.Name, prefix) {
					continue
				}
				if p.Status.Phase != corev1.PodRunning || image != "" && p.Spec.Containers[0].Image != image {
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
	etcd := strings.TrimPrefix(strings.Split(release.EtcdTag, "_")[0], "v")
	out, err := exec.CommandContext(ctx, kubectlBin, "--kubeconfig", kubeconfig, "exec", "-n", "kube-system", "etcd-"+controlPlane, "--",
		"etcd", "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "etcd Version: "+etcd) {
		t.Errorf("kubectl exec into etcd-%s: %v\n%s", controlPlane, err, out)
	}
	// etcdctl is in the image, as in upstream's, and reaches etcd with kubeadm's certificates,
	// as a user troubleshooting a control plane runs it.
	pki := "/etc/kubernetes/pki/etcd/"
	out, err = exec.CommandContext(ctx, kubectlBin, "--kubeconfig", kubeconfig, "exec", "-n", "kube-system", "etcd-"+controlPlane, "--",
		"etcdctl", "--endpoints", "https://127.0.0.1:2379", "--cacert", pki+"ca.crt", "--cert", pki+"server.crt", "--key", pki+"server.key",
		"endpoint", "health").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "https://127.0.0.1:2379 is healthy") {
		t.Errorf("etcdctl endpoint health in etcd-%s: %v\n%s", controlPlane, err, out)
	}
}
