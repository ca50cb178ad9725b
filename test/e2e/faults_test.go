package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/proc"
)

// repair is one row of the fault suite's table: a process killed with SIGKILL, how long until a
// new one ran and until what it serves answered again.
type repair struct {
	kind, name          string
	restarted, answered time.Duration
}

// checkFaults is the fault suite: on a bootstrap cluster with one workload cluster, it kills with
// SIGKILL, in turn, the workload cluster's worker agent, its load balancer, each static component
// of its control-plane node, every controller component on the bootstrap cluster and the
// bootstrap cluster's own agent. Each is started again within its bound and serves again;
// afterwards no Cluster API or packaging object is lost, re-created or has its spec rewritten,
// and the workload cluster is Available.
func checkFaults(t *testing.T, lc *localCluster, wc *clusterv1.Cluster, version string, machines int) {
	ctx := t.Context()
	before := objectIdentities(t, lc.client, wc.Namespace)
	wcDirs, cp, worker := controlPlaneAndWorker(t, cluster.Store{Root: filepath.Dir(lc.dirs.Root)}, wc.Name)
	wcc := workloadClient(t, lc, wc)
	var table []repair
	localMachines := &infrav1.LocalMachineList{}
	if err := lc.client.List(ctx, localMachines, client.InNamespace(wc.Namespace)); err != nil {
		t.Fatal(err)
	}
	for _, lm := range localMachines.Items {
		if lm.Status.AgentRestarts > 0 {
			t.Logf("LocalMachine %s counted %d agent restarts before the faults", lm.Name, lm.Status.AgentRestarts)
		}
	}

	// The workload cluster's worker agent: started again by the provider, its node heartbeats.
	restartsBefore := localMachineOf(t, lc.client, wc.Namespace, worker).Status.AgentRestarts
	killed := time.Now()
	restarted := killAndWaitRestart(t, wcDirs.NodePID(worker))
	eventually(t, 2*time.Minute, "a heartbeat of the restarted agent of "+worker, func() error { return heartbeatSince(t, wcc, worker, killed) })
	checkRestartCounted(t, lc.client, wc.Namespace, worker, restartsBefore)
	table = append(table, repair{"node agent (workload worker)", worker, restarted, time.Since(killed)})

	// Its load balancer: started again by the provider, the API server answers through it.
	table = append(table, checkLoadBalancerRestart(t, lc.client, wcc, wc, wcDirs.LoadBalancerPID()))

	// Each static component of the control-plane node: started again by the node's agent.
	for _, component := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		old := componentPIDs(wcDirs.Node(cp), component)
		if len(old) == 0 {
			t.Fatalf("no %s process of node %s", component, cp)
		}
		killed = time.Now()
		kill(old)
		eventually(t, restartBound, component+" started again", func() error {
			if now := componentPIDs(wcDirs.Node(cp), component); len(now) == 0 || slices.Contains(old, now[0]) {
				return fmt.Errorf("%s of %s does not run again", component, cp)
			}
			return nil
		})
		restarted = time.Since(killed)
		eventually(t, 2*time.Minute, "the workload cluster's API server after "+component+" was killed", func() error {
			return wcc.List(ctx, &corev1.NodeList{})
		})
		table = append(table, repair{"static component", component, restarted, time.Since(killed)})
	}

	// Every controller component on the bootstrap cluster, killed one after the other: each pod's
	// agent starts its container again after the kubelet's first crash back-off (10 s).
	node := lc.nodeName(t)
	pods := &corev1.PodList{}
	if err := lc.client.List(ctx, pods); err != nil {
		t.Fatal(err)
	}
	type victim struct {
		pod                         corev1.Pod
		restarts                    int32
		pids                        []int
		killed, restarted, answered time.Time
	}
	var victims []*victim
	for _, p := range pods.Items {
		if p.Spec.NodeName != node || p.Annotations["local.slipway.dev/simulated"] != "" || len(p.OwnerReferences) == 0 ||
			p.OwnerReferences[0].Kind != "ReplicaSet" || p.Status.Phase != corev1.PodRunning {
			continue
		}
		pids := proc.Using(podDir(lc, node, &p))
		if len(pids) == 0 {
			t.Errorf("no process of pod %s/%s", p.Namespace, p.Name)
			continue
		}
		victims = append(victims, &victim{pod: p, restarts: restartCount(&p), pids: pids})
	}
	for _, v := range victims {
		v.killed = time.Now()
		kill(v.pids)
	}
	// All are watched at once, so that each one's times are its own.
	eventually(t, 3*time.Minute, "every killed controller component running and Ready again", func() error {
		var waiting []string
		for _, v := range victims {
			if v.restarted.IsZero() {
				if now := proc.Using(podDir(lc, node, &v.pod)); len(now) > 0 && !slices.Contains(v.pids, now[0]) {
					v.restarted = time.Now()
				}
			}
			if v.answered.IsZero() {
				p := &corev1.Pod{}
				if err := lc.client.Get(ctx, client.ObjectKeyFromObject(&v.pod), p); err == nil && restartCount(p) > v.restarts && podReady(p) {
					v.answered = time.Now()
				}
			}
			if v.restarted.IsZero() || v.answered.IsZero() {
				waiting = append(waiting, v.pod.Namespace+"/"+v.pod.Name)
			}
		}
		if len(waiting) > 0 {
			return fmt.Errorf("not running and Ready again: %s", strings.Join(waiting, ", "))
		}
		return nil
	})
	for _, v := range victims {
		// Every controller pod of the cluster is killed at once: their processes start together
		// after the crash back-off, on 2 cores shared with the other test packages (a fresh-clone
		// .ci/run measured 20.1 s for one of 17; alone they take 10.5–15.9 s).
		const togetherBound = 15 * time.Second
		if d := v.restarted.Sub(v.killed); d > 10*time.Second+togetherBound {
			t.Errorf("pod %s/%s was started again %s after it was killed, beyond the crash back-off and %s", v.pod.Namespace, v.pod.Name, d, togetherBound)
		}
		// A Deployment's pod is <deployment>-<replica set hash>-<pod hash>.
		parts := strings.Split(v.pod.Name, "-")
		deployment := v.pod.Namespace + "/" + strings.Join(parts[:len(parts)-2], "-")
		table = append(table, repair{"controller component", deployment, v.restarted.Sub(v.killed), v.answered.Sub(v.killed)})
	}

	// The bootstrap cluster's own agent: started again by the provider running on it.
	restarted, answered := checkHomeAgentRepaired(t, lc)
	table = append(table, repair{"node agent (bootstrap cluster)", node, restarted, answered})

	eventually(t, 3*time.Minute, "the workload cluster Available after the faults", func() error {
		return clusterAvailable(ctx, lc, wc, version, machines)
	})
	after := objectIdentities(t, lc.client, wc.Namespace)
	var changed []string
	for k, v := range before {
		if after[k] != v {
			changed = append(changed, fmt.Sprintf("%s: %s → %q", k, v, after[k]))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			changed = append(changed, k+": new")
		}
	}
	sort.Strings(changed)
	if len(changed) > 0 {
		t.Errorf("the faults lost, re-created or rewrote %d of %d objects:\n%s", len(changed), len(before), strings.Join(changed, "\n"))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-31s %-60s %10s %10s\n", "KIND", "NAME", "RESTARTED", "ANSWERED")
	for _, r := range table {
		fmt.Fprintf(&b, "%-31s %-60s %10s %10s\n", r.kind, r.name, r.restarted.Round(100*time.Millisecond), r.answered.Round(100*time.Millisecond))
	}
	t.Logf("fault suite: %d processes killed, %d objects unchanged:\n%s", len(table), len(before), b.String())
}

// objectIdentities returns, for every Cluster API object of namespace and every packaging object
// of the cluster, its UID and generation: a lost or re-created object changes the first, a
// rewritten spec the second, and status writes neither.
func objectIdentities(t *testing.T, c client.Client, namespace string) map[string]string {
	t.Helper()
	out := map[string]string{}
	add := func(list *unstructured.UnstructuredList) {
		for _, o := range list.Items {
			out[fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())] = fmt.Sprintf("%s/%d", o.GetUID(), o.GetGeneration())
		}
	}
	for _, list := range clusterAPIObjects(t, c, namespace) {
		add(list)
	}
	for _, gvk := range []string{"packaging.carvel.dev/v1alpha1 PackageInstall", "packaging.carvel.dev/v1alpha1 PackageRepository", "kappctrl.k14s.io/v1alpha1 App"} {
		apiVersion, kind, _ := strings.Cut(gvk, " ")
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(apiVersion)
		list.SetKind(kind + "List")
		if err := c.List(t.Context(), list); err != nil {
			t.Fatalf("list %s: %v", kind, err)
		}
		add(list)
	}
	return out
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

// heartbeatSince checks that node has been Ready with a heartbeat after since.
func heartbeatSince(t *testing.T, c client.Client, node string, since time.Time) error {
	n := &corev1.Node{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: node}, n); err != nil {
		return err
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue && cond.LastHeartbeatTime.After(since) {
			return nil
		}
	}
	return fmt.Errorf("node %s has not been Ready with a heartbeat since %s", node, since.Format(time.TimeOnly))
}

// componentPIDs finds the processes of a static component of a node by their program's name.
func componentPIDs(nodeDir, component string) []int {
	var pids []int
	for _, pid := range proc.Using(nodeDir) {
		if args := proc.Cmdline(pid); len(args) > 0 && filepath.Base(args[0]) == component {
			pids = append(pids, pid)
		}
	}
	return pids
}

// podDir is where a node's agent runs a pod's containers.
func podDir(lc *localCluster, node string, p *corev1.Pod) string {
	return filepath.Join(lc.dirs.Node(node), "pods", fmt.Sprintf("%s_%s_%s", p.Namespace, p.Name, p.UID))
}

func kill(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func restartCount(p *corev1.Pod) int32 {
	var n int32
	for _, s := range p.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}
