package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/local/vm"
)

// agentArgs are the arguments of a node agent; proc.Alive finds it by them.
func agentArgs(exe string, dirs Dirs, node string) []string {
	return []string{exe, "local", "node", "run", "--node", node, "--cluster-dir", dirs.Root}
}

func lbArgs(exe string, dirs Dirs) []string {
	return []string{exe, "local", "lb", "run", "--cluster-dir", dirs.Root}
}

// nodeRunning says whether a node runs: its init process for a real node, else its agent.
func nodeRunning(dirs Dirs, spec *Spec, node string) bool {
	if spec.Real() {
		_, ok := vm.Running(dirs.Node(node))
		return ok
	}
	return agentAlive(dirs, node)
}

// agentAlive says whether a node's agent runs, matched by its exact arguments.
func agentAlive(dirs Dirs, node string) bool {
	return proc.Alive(dirs.NodePID(node), agentArgs("", dirs, node))
}

// startProcesses starts the load balancer and every node agent that does not run, and returns
// the nodes it started.
func (s Store) startProcesses(dirs Dirs, spec *Spec, exe string) ([]NodeSpec, error) {
	if spec.Real() {
		return startRealNodes(dirs, spec, spec.Nodes, exe)
	}
	if spec.LoadBalancerIP != "" {
		if _, err := s.StartLoadBalancer(spec.Name, exe); err != nil {
			return nil, err
		}
	}
	var started []NodeSpec
	for _, n := range spec.Nodes {
		didStart, err := s.StartNode(spec.Name, n, exe)
		if err != nil {
			return nil, err
		}
		if didStart {
			started = append(started, n)
		}
	}
	return started, nil
}

// Start brings a stopped or degraded cluster back, after a host restart or a killed node: it
// starts what does not run and waits for the nodes to be Ready.
func (s Store) Start(ctx context.Context, name, exe string, timeout time.Duration) error {
	spec, err := s.Get(name)
	if err != nil {
		return err
	}
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	dirs, err := s.Dirs(name)
	if err != nil {
		return err
	}
	started := time.Now()
	restarted, err := s.startProcesses(dirs, spec, exe)
	if err != nil {
		return err
	}
	if spec.Owner != nil {
		// Cluster API holds the credentials of the clusters it made: wait until the endpoint
		// answers, and let the management cluster see its nodes Ready.
		addr := net.JoinHostPort(spec.EndpointHost(), fmt.Sprint(APIServerPort))
		return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				conn.Close()
			}
			return err == nil, nil
		})
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", dirs.Kubeconfig())
	if err != nil {
		return err
	}
	if err := waitForAPI(ctx, cfg, timeout); err != nil {
		return fmt.Errorf("the API server did not become ready: %w (logs: %s)", err, dirs.Root)
	}
	if err := waitForNodes(ctx, cfg, restarted, started, timeout); err != nil {
		return err
	}
	// The nodes that kept running only need to be Ready.
	return waitForNodes(ctx, cfg, spec.Nodes, time.Time{}, timeout)
}

// Delete stops every process of a cluster, removes its state and, when kubeconfig is not empty,
// its context from that kubeconfig. It leaves no process, port or file behind.
func (s Store) Delete(name, kubeconfig string) error {
	dirs, err := s.Dirs(name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dirs.Root); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("local cluster %q %w: `slipway local cluster list` shows the clusters there are", name, ErrNotFound)
	}
	// This cluster's nodes stop first: its infrastructure provider runs on them, and while it
	// runs it would make again a node of a cluster it owns that went before it. Real nodes are
	// powered off, every process of theirs killed, as VMs are. A node that could not be removed
	// keeps the cluster's directory, so that deleting again finds it and finishes.
	spec, specErr := ReadSpec(dirs)
	if specErr == nil && spec.Real() {
		if err := deleteRealNodes(dirs, spec); err != nil {
			return fmt.Errorf("%w; the cluster's directory %s is kept, and the clusters its provider made are not deleted yet: delete it again", err, dirs.Root)
		}
	}
	// Agents stop their pods and static components on SIGTERM; whatever still uses the
	// cluster's directory afterwards is killed. A killed agent leaves its egress socket, which
	// may be outside the directory.
	var errs []error
	var agents []int
	var sockets []string
	if specErr == nil && !spec.Real() {
		for _, n := range spec.Nodes {
			if agentAlive(dirs, n.Name) {
				agents = append(agents, proc.ReadPID(dirs.NodePID(n.Name)))
			}
			sockets = append(sockets, dirs.EgressSocket(n.Name))
		}
	}
	defer func() {
		for _, s := range sockets {
			_ = os.Remove(s)
		}
	}()
	if err := proc.Terminate(agents, 30*time.Second); err != nil {
		errs = append(errs, err)
	}
	if err := proc.Terminate(proc.Using(dirs.Root), 10*time.Second); err != nil {
		errs = append(errs, err)
	}
	// Then the clusters its provider made: nothing else would delete them.
	if specs, err := s.List(); err == nil {
		for _, owned := range specs {
			if owned.Owner != nil && owned.Owner.ManagementCluster == name && owned.Name != name {
				if err := s.Delete(owned.Name, ""); err != nil && !errors.Is(err, ErrNotFound) {
					errs = append(errs, fmt.Errorf("cluster %s of %s: %w", owned.Name, name, err))
				}
			}
		}
	}
	if specErr == nil && spec.Real() && spec.LoadBalancerIP != "" {
		if err := vm.RemoveHostAddress(netip.MustParseAddr(spec.LoadBalancerIP)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(dirs.Root); err != nil {
		errs = append(errs, err)
	}
	if err := s.stopNodeServiceWhenIdle(); err != nil {
		errs = append(errs, err)
	}
	if kubeconfig != "" {
		if err := RemoveFromKubeconfig(name, kubeconfig); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// StartNode starts one node unless it runs (a real node's init process, else its agent), and
// says whether it started it; the infrastructure provider starts the nodes of the clusters it
// owns one machine at a time.
func (s Store) StartNode(name string, node NodeSpec, exe string) (bool, error) {
	dirs, err := s.nodeDirs(name, node.Name)
	if err != nil {
		return false, err
	}
	spec, err := ReadSpec(dirs)
	if err != nil {
		return false, err
	}
	if spec.Real() {
		if _, err := s.EnsureNodeService(exe); err != nil {
			return false, err
		}
		return startRealNode(dirs.Node(node.Name), exe)
	}
	started, err := startUnlessAlive(agentArgs(exe, dirs, node.Name), dirs.NodePID(node.Name), dirs.NodeLogs(node.Name)+"/agent.log")
	if err != nil {
		return false, fmt.Errorf("failed to start node %s: %w", node.Name, err)
	}
	return started, nil
}

// startUnlessAlive starts args detached unless the process of pidPath runs them (proc.Alive),
// and says whether it started it. The check and the start hold a lock: the provider of a
// cluster and the provider running in it may both look at the same process.
func startUnlessAlive(args []string, pidPath, logPath string) (bool, error) {
	started := false
	err := proc.WithLock(pidPath+".lock", func() error {
		if proc.Alive(pidPath, args) {
			return nil
		}
		if _, err := proc.SpawnDetached(args, logPath, pidPath); err != nil {
			return err
		}
		started = true
		return nil
	})
	return started, err
}

// NodeRunning says whether a node runs: a real node's init process, else its agent.
func (s Store) NodeRunning(name, node string) bool {
	dirs, err := s.nodeDirs(name, node)
	if err != nil {
		return false
	}
	spec, err := ReadSpec(dirs)
	return err == nil && nodeRunning(dirs, spec, node)
}

// StopNode destroys a node as the deletion of its machine does, and removes its state: its
// agent and every process of it are killed at once, as a VM is powered off rather than shut
// down. What needed a graceful end had it before: Cluster API drained the node and, for a
// control-plane node, removed its etcd member first.
func (s Store) StopNode(name, node string) error {
	dirs, err := s.nodeDirs(name, node)
	if err != nil {
		return err
	}
	if spec, err := ReadSpec(dirs); err == nil && spec.Real() {
		if _, err := os.Stat(dirs.Node(node)); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return vm.Delete(dirs.Node(node))
	}
	pids := proc.WithArgs(agentArgs("", dirs, node))
	if agentAlive(dirs, node) {
		pids = append(pids, proc.ReadPID(dirs.NodePID(node)))
	}
	// Then a process the agent started as it died. The state stays while anything of the node
	// runs: the next try kills it.
	for _, pids := range [][]int{append(pids, proc.Using(dirs.Node(node))...), proc.Using(dirs.Node(node))} {
		if err := proc.Terminate(pids, 0); err != nil {
			return fmt.Errorf("failed to stop node %s of %s: %w", node, name, err)
		}
	}
	var errs []error
	if err := os.RemoveAll(dirs.Node(node)); err != nil {
		errs = append(errs, err)
	}
	if err := os.Remove(dirs.EgressSocket(node)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// StartLoadBalancer starts the cluster's load balancer unless it runs, and says whether it
// started it.
func (s Store) StartLoadBalancer(name, exe string) (bool, error) {
	dirs, err := s.Dirs(name)
	if err != nil {
		return false, err
	}
	return StartLoadBalancerIn(dirs, exe)
}

// StartLoadBalancerIn is StartLoadBalancer for the cluster whose directories are dirs. The load
// balancer of real nodes listens on an address of the host's on the bridge, which it adds first
// (a host restart takes both): the provider looks every 3 s, and only a load balancer that does
// not run costs more than a look at /proc.
func StartLoadBalancerIn(dirs Dirs, exe string) (bool, error) {
	if LoadBalancerRunning(dirs) {
		return false, nil
	}
	if spec, err := ReadSpec(dirs); err == nil && spec.Real() && spec.LoadBalancerIP != "" {
		if err := vm.AddHostAddress(netip.MustParseAddr(spec.LoadBalancerIP)); err != nil {
			return false, err
		}
	}
	started, err := startUnlessAlive(lbArgs(exe, dirs), dirs.LoadBalancerPID(), dirs.LoadBalancerLog())
	if err != nil {
		return false, fmt.Errorf("failed to start the load balancer of %s: %w", filepath.Base(dirs.Root), err)
	}
	return started, nil
}

// LoadBalancerRunning says whether the load balancer of the cluster whose directories are dirs
// runs.
func LoadBalancerRunning(dirs Dirs) bool {
	return proc.Alive(dirs.LoadBalancerPID(), lbArgs("", dirs))
}

// nodeDirs returns the directories of a cluster after checking the node's name too.
func (s Store) nodeDirs(name, node string) (Dirs, error) {
	if err := ValidateNodeName(node); err != nil {
		return Dirs{}, err
	}
	return s.Dirs(name)
}
