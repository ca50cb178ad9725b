package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/local/vm"
)

// TestManagementClusterOfRealNodes creates a management cluster in the installer UI, in Debian's
// Chromium, with nothing said of its nodes: they are real, the default, and its bootstrap
// cluster's too, whose provider, in a container, makes the management cluster's nodes through
// the store's node service; the pivot moves them to it, and from then on its own `local`
// provider, in a container on one of them, makes and deletes nodes of this host through the
// service, which the load balancers start again when it is killed. The identity provider chosen
// in the page reaches its pinniped. The fault suite of real nodes runs on it
// (checkRealNodeFaults); then it scales its own workers through the service, and makes a
// workload cluster of real nodes by default; its delete, from a cleanup cluster of real nodes,
// leaves no node, namespace or process behind, the node service included. It is made at the
// default version, TestManagementClusterCreate's at the older one, which it upgrades.
func TestManagementClusterOfRealNodes(t *testing.T) {
	needRoot(t)
	addr, repo := pushPackages(t)
	pushNodeImages(t, addr)
	store := cluster.Store{Root: filepath.Join(home, "local")}
	beforeNodes := vm.OnHost()
	before, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	const name = "e2e-realmc"
	t.Cleanup(func() {
		deleteAddedClusters(t, store, before)
		checkNoRealNodeLeft(t, beforeNodes)
	})
	dirs, err := store.Dirs(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpRealNodeLogs(t, dirs)
			data, _ := os.ReadFile(filepath.Join(store.NodeServiceDir(), "node-service.log"))
			t.Logf("node service log:\n%s", tail(data, 4000))
		}
	})
	// Made in the installer UI, in Debian's Chromium (test/ui/management.mjs: the wizard with an
	// OIDC identity provider, the review, the deploy followed to its end, a reload after it), which
	// runs `management-cluster create`'s flow with nothing said of the nodes.
	uiCtx, stopUI := context.WithTimeout(t.Context(), 20*time.Minute)
	defer stopUI()
	url := serveUI(t, uiCtx, "management-cluster", "create", "--ui", "--browser", "none", "--bind", "127.0.0.1:0",
		"--package-repository", repo, "-t", "10m")
	start := time.Now()
	out := runBrowser(t, uiCtx, "management.mjs", url, name)
	t.Logf("the management cluster of real nodes was created through the installer in %s", time.Since(start).Round(time.Second))
	stopUI()
	// The wizard asks nothing of the nodes; the file it reviews and deploys has the default.
	if !strings.Contains(out, "\nLOCAL_NODE_RUNTIME: real\n") {
		t.Errorf("the installer's file does not say LOCAL_NODE_RUNTIME: real:\n%s", out)
	}
	if out, err := runSlipway(t, "management-cluster", "get", name); err != nil || !strings.Contains(strings.Join(strings.Fields(out), " "), name+" tkg-system running 1/1 1/1") {
		t.Errorf("management-cluster get: %v\n%s", err, out)
	}
	spec, err := store.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if !spec.Real() || spec.Owner == nil || spec.Owner.ManagementCluster != name {
		t.Errorf("the management cluster's local cluster: runtime %q, owner %+v; want real nodes owned by itself", spec.Runtime, spec.Owner)
	}
	if !store.NodeServiceRunning() {
		t.Fatal("the store's node service does not run")
	}
	// The bootstrap cluster was of real nodes too, as its lines in the audit log say: every node
	// of the flow is real.
	realNodeImage := "Ensuring node image (slipway real node: containerd, kubelet, kubeadm, Kubernetes " + assets.DefaultKubernetesVersion() + ")"
	if audit, err := os.ReadFile(filepath.Join(home, "logs", name+".log")); err != nil || !strings.Contains(string(audit), realNodeImage) {
		t.Errorf("the audit log does not say the bootstrap cluster's nodes were real (%v):\n%s", err, tail(audit, 3000))
	}

	mgmt := managementClusterOf(t, name)
	mc := mgmt.client
	t.Cleanup(func() {
		if t.Failed() {
			for _, ns := range []string{"capl-system", "capi-system", "tkg-system"} {
				dumpPods(t, mgmt, ns)
			}
		}
	})
	ctx := t.Context()

	// The identity provider chosen in the page reaches the management cluster's pinniped: its
	// values Secret, adopted for the cluster, renders the (simulated) supervisor.
	eventually(t, 2*time.Minute, "the pinniped supervisor of the OIDC identity provider", func() error {
		d := &appsv1.Deployment{}
		if err := mc.Get(ctx, client.ObjectKey{Namespace: "pinniped-supervisor", Name: "pinniped-supervisor"}, d); err != nil {
			return err
		}
		if got := d.Annotations["tkg.tanzu.vmware.com/upstream-issuer"]; got != "https://login.example.com/oauth2" {
			return fmt.Errorf("upstream issuer %q", got)
		}
		return nil
	})
	values := &corev1.Secret{}
	if err := mc.Get(ctx, client.ObjectKey{Namespace: "tkg-system", Name: name + "-pinniped-package"}, values); err != nil ||
		!slices.ContainsFunc(values.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Kind == "Cluster" && r.Name == name }) {
		t.Errorf("the pinniped values Secret is not the Cluster's: %v", err)
	}

	// Its nodes are the real kubelet's on containerd, and its own provider runs in a container
	// on one of them: no pod of the node agent, none simulated.
	nodes := &corev1.NodeList{}
	if err := mc.List(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if !strings.HasPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "containerd://") {
			t.Errorf("node %s runs %s, want containerd", n.Name, n.Status.NodeInfo.ContainerRuntimeVersion)
		}
	}
	pods := &corev1.PodList{}
	if err := mc.List(ctx, pods, client.InNamespace("capl-system")); err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0 && strings.HasPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://") {
			running++
		}
	}
	if running != 1 {
		t.Fatalf("%d pods of the local provider run in containerd, want 1", running)
	}

	// A killed node service is started again by the load balancer of a cluster of real nodes,
	// and the scale below goes through the new one.
	serviceArgs := []string{slipway, "local", "node-service"}
	killed := proc.WithArgs(serviceArgs)
	if len(killed) != 1 {
		t.Fatalf("%d node service processes, want 1", len(killed))
	}
	if err := syscall.Kill(killed[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	eventually(t, 30*time.Second, "the node service started again", func() error {
		if pids := proc.WithArgs(serviceArgs); len(pids) != 1 || pids[0] == killed[0] || !store.NodeServiceRunning() {
			return fmt.Errorf("node service processes %v, the killed one %d", pids, killed[0])
		}
		return nil
	})
	t.Logf("the killed node service ran again after %s", time.Since(killedAt).Round(100*time.Millisecond))

	// Its processes killed, one at a time, come back; the provider's among them.
	checkRealNodeFaults(t, mgmt, store, name)

	// It manages itself through the node service: one more worker is a real node of this host,
	// which the provider in the container made, after it was killed.
	c := &clusterv1.Cluster{}
	if err := mc.Get(ctx, client.ObjectKey{Namespace: "tkg-system", Name: name}, c); err != nil {
		t.Fatal(err)
	}
	scaled := time.Now()
	patchTopology(t, mgmt, c, func(c *clusterv1.Cluster) { c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr.To[int32](2) })
	eventually(t, 4*time.Minute, "two workers", func() error { return clusterAvailable(ctx, mgmt, c, c.Spec.Topology.Version, 3) })
	t.Logf("the management cluster scaled itself to two workers in %s", time.Since(scaled).Round(100*time.Millisecond))
	if spec, err = store.Get(name); err != nil || len(spec.Nodes) != 3 {
		t.Fatalf("the store holds %v nodes of %s (%v), want 3", spec, name, err)
	}
	if err := mc.List(ctx, nodes); err != nil || len(nodes.Items) != 3 {
		t.Fatalf("%d nodes (%v), want 3", len(nodes.Items), err)
	}

	checkRealWorkloadCluster(t, mgmt, store)

	// Its delete runs from a cleanup cluster of real nodes, as its log file says, and leaves
	// nothing: no node, no load balancer address, no node service.
	logFile := filepath.Join(t.TempDir(), "delete.log")
	deleted := time.Now()
	out, err = runSlipwayTimeout(t, 10*time.Minute, "management-cluster", "delete", name, "-y", "--log-file", logFile)
	if err != nil {
		t.Fatalf("management-cluster delete: %v\n%s", err, out)
	}
	t.Logf("management-cluster delete of real nodes took %s:\n%s", time.Since(deleted).Round(100*time.Millisecond), out)
	if log, err := os.ReadFile(logFile); err != nil || !strings.Contains(string(log), realNodeImage) {
		t.Errorf("the delete's log does not say the cleanup cluster's nodes were real (%v):\n%s", err, tail(log, 3000))
	}
	if _, err := store.Get(name); err == nil {
		t.Errorf("local cluster %s is left after its delete", name)
	}
	if store.NodeServiceRunning() || len(proc.WithArgs([]string{slipway, "local", "node-service"})) > 0 {
		t.Errorf("the node service still runs with no cluster of real nodes left")
	}
	if _, err := os.Stat(store.NodeServiceDir()); !os.IsNotExist(err) {
		t.Errorf("the node service's directory is left: %v", err)
	}
	checkNoRealNodeLeft(t, beforeNodes)
	if out, _ := exec.Command("pgrep", "-a", "-f", "local node-service").CombinedOutput(); len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("a node service process is left:\n%s", out)
	}
}

// checkRealWorkloadCluster creates a workload cluster with `cluster create` from a flat file
// without LOCAL_NODE_RUNTIME on a management cluster of real nodes: its nodes are real too, as
// its Cluster says, and its delete leaves its local cluster gone.
func checkRealWorkloadCluster(t *testing.T, mgmt *localCluster, store cluster.Store) {
	t.Helper()
	const name = "e2e-realwc"
	file := filepath.Join(t.TempDir(), "wc.yaml")
	if err := os.WriteFile(file, []byte("CLUSTER_NAME: "+name+"\nCLUSTER_PLAN: dev\nWORKER_MACHINE_COUNT: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := runSlipwayTimeout(t, 10*time.Minute, "cluster", "create", "-f", file, "-t", "5m")
	t.Logf("cluster create of a workload cluster on real nodes took %s:\n%s", time.Since(start).Round(time.Second), out)
	if err != nil {
		t.Fatalf("cluster create: %v", err)
	}
	wc := &clusterv1.Cluster{}
	if err := mgmt.client.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: name}, wc); err != nil {
		t.Fatal(err)
	}
	if got := wc.Annotations[infrav1.NodeRuntimeAnnotation]; got != infrav1.NodeRuntimeReal {
		t.Errorf("the workload Cluster's %s is %q, want %q, its management cluster's", infrav1.NodeRuntimeAnnotation, got, infrav1.NodeRuntimeReal)
	}
	if spec, err := store.Get(name); err != nil || !spec.Real() {
		t.Errorf("the workload cluster's local cluster: %+v, %v; want real nodes", spec, err)
	}
	nodes := &corev1.NodeList{}
	if err := workloadClient(t, mgmt, wc).List(t.Context(), nodes); err != nil || len(nodes.Items) != 2 {
		t.Fatalf("%d nodes of %s (%v), want 2", len(nodes.Items), name, err)
	}
	for _, n := range nodes.Items {
		if !strings.HasPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "containerd://") {
			t.Errorf("node %s runs %s, want containerd", n.Name, n.Status.NodeInfo.ContainerRuntimeVersion)
		}
	}
	deleted := time.Now()
	if out, err := runSlipwayTimeout(t, 5*time.Minute, "cluster", "delete", name, "-y", "-t", "3m"); err != nil {
		t.Fatalf("cluster delete: %v\n%s", err, out)
	}
	eventually(t, 3*time.Minute, "the workload cluster's local cluster gone", func() error {
		if _, err := store.Get(name); err == nil {
			return fmt.Errorf("local cluster %s is there", name)
		}
		return nil
	})
	t.Logf("the workload cluster of real nodes was gone %s after cluster delete", time.Since(deleted).Round(100*time.Millisecond))
}

// tail is the last n bytes of data.
func tail(data []byte, n int) []byte {
	if len(data) > n {
		return data[len(data)-n:]
	}
	return data
}
