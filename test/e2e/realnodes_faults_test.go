package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/images"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/local/vm"
)

// repair is one row of the fault suite's table: a process killed with SIGKILL, how long until a
// new one ran and until what it serves answered again.
type repair struct {
	kind, name          string
	restarted, answered time.Duration
}

// checkRealNodeFaults is the fault suite on real nodes, run on the local cluster of real nodes
// name in store, whose API c reaches: it kills with SIGKILL, in turn, a worker's containerd and
// its kubelet (each started again by the node's init within restartBound, the node's lease
// renewed after it and a new pod started on the node), the process of a static pod
// (kube-scheduler on the control-plane node: the kubelet starts its container again and the pod
// is Ready), the cluster's load balancer (checked by loadBalancer, given its pid file: what
// starts it again differs by who made the cluster) and the process of a controller, the one pod
// of ctrl (started again by the kubelet). It logs the table of what came back when.
func checkRealNodeFaults(t *testing.T, c client.Client, name string, store cluster.Store, ctrl faultController, loadBalancer func(pidPath string) repair) {
	ctx := t.Context()
	dirs, cp, worker := controlPlaneAndWorker(t, store, name)
	var table []repair

	// containerd and the kubelet of a worker: its init starts them again, as systemd would, and
	// the kubelet renews the node's lease.
	for _, service := range []string{"containerd", "kubelet"} {
		pid := nodeProcess(t, dirs.Node(worker), func(args []string, _ []byte) bool { return filepath.Base(args[0]) == service })
		killed := kill9(t, pid)
		var restarted time.Duration
		eventually(t, restartBound, service+" of "+worker+" started again", func() error {
			if p := findNodeProcess(dirs.Node(worker), func(args []string, _ []byte) bool { return filepath.Base(args[0]) == service }); p == 0 || p == pid {
				return fmt.Errorf("no new %s", service)
			}
			restarted = time.Since(killed)
			return nil
		})
		eventually(t, time.Minute, "the lease of "+worker+" renewed after "+service+" was killed", func() error { return leaseRenewedSince(t, c, worker, killed) })
		// The kubelet renews its lease without containerd: a pod started on the node afterwards
		// shows that both work again.
		checkPodStartsOn(t, c, worker, dirs.NodeLogs(worker))
		table = append(table, repair{service, worker, restarted, time.Since(killed)})
	}

	// A static pod's process: the kubelet starts its container again.
	scheduler := "kube-scheduler-" + cp
	table = append(table, killContainerProcess(t, c, "kube-system", scheduler, dirs.Node(cp),
		func(args []string, _ []byte) bool { return filepath.Base(args[0]) == "kube-scheduler" }))

	// The load balancer of the control-plane endpoint.
	table = append(table, loadBalancer(dirs.LoadBalancerPID()))

	// A controller's process, in its container on one of the nodes.
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ctrl.namespace), ctrl.labels); err != nil || len(pods.Items) != 1 {
		t.Fatalf("%d pods of %s in %s (%v), want 1", len(pods.Items), ctrl.name, ctrl.namespace, err)
	}
	pod := pods.Items[0]
	table = append(table, killContainerProcess(t, c, pod.Namespace, pod.Name, dirs.Node(pod.Spec.NodeName), ctrl.match))

	for _, r := range table {
		t.Logf("%-40s %-28s started again after %-8s serving after %s", r.kind, r.name, r.restarted.Round(10*time.Millisecond), r.answered.Round(10*time.Millisecond))
	}
}

// restartedByProvider is checkRealNodeFaults' load-balancer check for a cluster of the local
// provider: the provider of the management cluster mgmt started it again and counted it
// (checkLoadBalancerRestart).
func restartedByProvider(t *testing.T, mgmt, c client.Client, cl *clusterv1.Cluster) func(string) repair {
	return func(pidPath string) repair { return checkLoadBalancerRestart(t, mgmt, c, cl, pidPath) }
}

// faultController is the controller whose process the fault suite kills: the one pod in
// namespace with labels, and in it the process match finds.
type faultController struct {
	namespace string
	labels    client.MatchingLabels
	name      string
	match     func(args []string, environ []byte) bool
}

// slipwayComponent is the faultController of the pod in namespace with labels whose container
// runs slipway's component.
func slipwayComponent(namespace string, labels client.MatchingLabels, component string) faultController {
	env := []byte(images.EnvComponent + "=" + component + "\x00")
	return faultController{namespace: namespace, labels: labels, name: component,
		match: func(_ []string, environ []byte) bool { return bytes.Contains(environ, env) }}
}

// kappController is the faultController of kapp-controller's controller process (not its
// sidecarexec, the same binary with --sidecarexec).
var kappController = faultController{namespace: "tkg-system", labels: client.MatchingLabels{"app": "kapp-controller"}, name: "kapp-controller",
	match: func(args []string, _ []byte) bool {
		return filepath.Base(args[0]) == "kapp-controller" && !slices.Contains(args, "--sidecarexec")
	}}

// killContainerProcess kills the process of a pod's container on the node at nodeDir, found by
// match, and waits until the kubelet has started the container again and the pod is Ready.
func killContainerProcess(t *testing.T, c client.Client, namespace, name, nodeDir string, match func(args []string, environ []byte) bool) repair {
	t.Helper()
	pod := &corev1.Pod{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	before := restartCount(pod)
	pid := nodeProcess(t, nodeDir, match)
	killed := kill9(t, pid)
	var restarted time.Duration
	eventually(t, time.Minute, "the container of "+name+" started again", func() error {
		if p := findNodeProcess(nodeDir, match); p == 0 || p == pid {
			return fmt.Errorf("no new process")
		}
		restarted = time.Since(killed)
		return nil
	})
	eventually(t, 2*time.Minute, name+" Ready after its restart", func() error {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, pod); err != nil {
			return err
		}
		if n := restartCount(pod); n <= before || !podReady(pod) {
			return fmt.Errorf("restarts %d (%d before), ready %v", n, before, podReady(pod))
		}
		return nil
	})
	return repair{"container of " + namespace + "/" + name, pod.Spec.NodeName, restarted, time.Since(killed)}
}

// nodeProcess is findNodeProcess, failing the test when no process matches.
func nodeProcess(t *testing.T, nodeDir string, match func(args []string, environ []byte) bool) int {
	t.Helper()
	pid := findNodeProcess(nodeDir, match)
	if pid == 0 {
		t.Fatalf("no process of the node %s matches", filepath.Base(nodeDir))
	}
	return pid
}

// findNodeProcess returns a process of the real node at nodeDir whose command line and
// environment match; 0 when none does.
func findNodeProcess(nodeDir string, match func(args []string, environ []byte) bool) int {
	pids, _ := vm.Processes(nodeDir)
	for _, pid := range pids {
		args := proc.Cmdline(pid)
		if len(args) == 0 {
			continue
		}
		environ, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
		if match(args, environ) {
			return pid
		}
	}
	return 0
}

// kill9 kills pid with SIGKILL, as a crash would, and returns when.
func kill9(t *testing.T, pid int) time.Time {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// checkPodStartsOn deletes the kube-proxy pod of node, which its DaemonSet makes again there,
// and waits until the new pod is Ready: the node's kubelet and containerd stop and start pods.
// The DaemonSet makes the new pod only once the old one is gone, which takes the kubelet's
// stopping it through containerd; a failure says where the old pod stands and what the node's
// kubelet (its log in logDir) said of it.
func checkPodStartsOn(t *testing.T, c client.Client, node, logDir string) {
	t.Helper()
	find := func() (*corev1.Pod, error) {
		pods := &corev1.PodList{}
		if err := c.List(t.Context(), pods, client.InNamespace("kube-system"), client.MatchingLabels{"k8s-app": "kube-proxy"}); err != nil {
			return nil, err
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.Spec.NodeName == node && p.DeletionTimestamp == nil {
				return p, nil
			}
		}
		return nil, fmt.Errorf("no kube-proxy pod on %s", node)
	}
	old, err := find()
	if err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if err := c.Delete(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	eventuallyExplained(t, 3*time.Minute, "a new kube-proxy pod Ready on "+node, func() error {
		p, err := find()
		if err != nil {
			return err
		}
		if p.UID == old.UID || !podReady(p) {
			return fmt.Errorf("pod %s (the deleted one: %v) ready %v", p.Name, p.UID == old.UID, podReady(p))
		}
		return nil
	}, func() {
		left := &corev1.Pod{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(old), left); err != nil {
			t.Logf("the deleted pod %s: %v", old.Name, err)
		} else {
			t.Logf("the deleted pod %s, deleted at %v: phase %s, containers %+v", old.Name, left.DeletionTimestamp, left.Status.Phase, left.Status.ContainerStatuses)
		}
		data, _ := os.ReadFile(filepath.Join(logDir, "kubelet.log"))
		var lines []string
		for line := range strings.Lines(string(data)) {
			if strings.Contains(line, old.Name) || strings.Contains(line, string(old.UID)) ||
				strings.HasPrefix(line, "E") && strings.Contains(line, "containerd.sock") {
				lines = append(lines, line)
			}
		}
		t.Logf("the last lines of the kubelet of %s on the pod and containerd (the pod deleted at %s):\n%s", node, deleted.Format("15:04:05"),
			strings.Join(lines[max(0, len(lines)-60):], ""))
	})
}

// leaseRenewedSince checks that the kubelet of node renewed its lease after since: the real
// kubelet's heartbeat (it writes the Node's status only on a change, or every 5 minutes).
func leaseRenewedSince(t *testing.T, c client.Client, node string, since time.Time) error {
	lease := &coordinationv1.Lease{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: node}, lease); err != nil {
		return err
	}
	if lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.After(since) {
		return fmt.Errorf("the lease of %s was last renewed at %v", node, lease.Spec.RenewTime)
	}
	return nil
}

// controlPlaneAndWorker returns the directories of the local cluster name of store and the names
// of its first control-plane node and its first worker.
func controlPlaneAndWorker(t *testing.T, store cluster.Store, name string) (dirs cluster.Dirs, cp, worker string) {
	t.Helper()
	dirs, err := store.Dirs(name)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cluster.ReadSpec(dirs)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range spec.Nodes {
		switch {
		case n.Role == cluster.RoleControlPlane && cp == "":
			cp = n.Name
		case n.Role != cluster.RoleControlPlane && worker == "":
			worker = n.Name
		}
	}
	if cp == "" || worker == "" {
		t.Fatalf("the nodes of %s, %+v: want a control-plane node and a worker", name, spec.Nodes)
	}
	return dirs, cp, worker
}

// restartCount is how many times the kubelet has started again the containers of a pod.
func restartCount(p *corev1.Pod) int32 {
	var n int32
	for _, s := range p.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}
