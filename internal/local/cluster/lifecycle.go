package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/local/vm"
)

func lbArgs(exe string, dirs Dirs) []string {
	return []string{exe, "local", "lb", "run", "--cluster-dir", dirs.Root}
}

// nodeRunning says whether a node runs: its init process.
func nodeRunning(dirs Dirs, node string) bool {
	_, ok := vm.Running(dirs.Node(node))
	return ok
}

// errAgentCluster refuses to run a cluster an older slipway made of its node agent's nodes.
func errAgentCluster(name string) error {
	return fmt.Errorf("local cluster %s is of the node agent's nodes, which an older slipway made and this one does not run: delete it with `slipway local cluster delete %s`", name, name)
}

// startProcesses starts the load balancer and every node that does not run, and returns the
// nodes it started.
func (s Store) startProcesses(dirs Dirs, spec *Spec, exe string) ([]NodeSpec, error) {
	if !spec.Real() {
		return nil, errAgentCluster(spec.Name)
	}
	return startNodes(dirs, spec, spec.Nodes, exe)
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
	// From here on nothing starts the cluster's load balancer again (WatchLoadBalancers, the
	// provider, start): the mark is written under the lock each of them takes to start it.
	if err := dirs.markDeleting(); err != nil {
		return fmt.Errorf("failed to begin deleting local cluster %s: %w", name, err)
	}
	// This cluster's nodes stop first: its infrastructure provider runs on them, and while it
	// runs it would make again a node of a cluster it owns that went before it. The nodes are
	// powered off, every process of theirs killed, as VMs are. A node that could not be removed
	// keeps the cluster's directory, so that deleting again finds it and finishes.
	spec, specErr := ReadSpec(dirs)
	if specErr == nil && spec.Real() {
		if err := deleteRealNodes(dirs, spec); err != nil {
			return fmt.Errorf("%w; the cluster's directory %s is kept, and the clusters its provider made are not deleted yet: delete it again", err, dirs.Root)
		}
	}
	// Whatever still uses the cluster's directory (its load balancer, the processes of a cluster
	// an older slipway's node agent made) is killed.
	var errs []error
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
		if err := releaseHostAddress(spec.LoadBalancerIP); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.removeDir(dirs); err != nil {
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

// StartNode starts one node unless its init process runs, and says whether it started it; the
// infrastructure provider starts the nodes of the clusters it owns one machine at a time.
func (s Store) StartNode(name string, node NodeSpec, exe string) (bool, error) {
	dirs, err := s.nodeDirs(name, node.Name)
	if err != nil {
		return false, err
	}
	spec, err := ReadSpec(dirs)
	if err != nil {
		return false, err
	}
	if !spec.Real() {
		return false, errAgentCluster(name)
	}
	if _, err := s.EnsureNodeService(exe); err != nil {
		return false, err
	}
	return startRealNode(dirs.Node(node.Name), exe)
}

// startUnlessAlive starts args detached unless the process of pidPath runs them (proc.Alive),
// and says whether it started it. The check and the start hold a lock beside pidPath, in a
// directory that must exist: the provider of a cluster and the provider running in it may both
// look at the same process. prepare, when not nil, runs under the lock before the start; its
// error refuses the start.
func startUnlessAlive(args []string, pidPath, logPath string, prepare func() error) (bool, error) {
	started := false
	err := proc.WithLockIn(pidPath+".lock", func() error {
		if proc.Alive(pidPath, args) {
			return nil
		}
		if prepare != nil {
			if err := prepare(); err != nil {
				return err
			}
		}
		if _, err := proc.SpawnDetached(args, logPath, pidPath); err != nil {
			return err
		}
		started = true
		return nil
	})
	return started, err
}

// StopNode destroys a node as the deletion of its machine does, and removes its state: every
// process of it is killed at once, as a VM is powered off rather than shut down. What needed a
// graceful end had it before: Cluster API drained the node and, for a control-plane node,
// removed its etcd member first.
func (s Store) StopNode(name, node string) error {
	dirs, err := s.nodeDirs(name, node)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dirs.Node(node)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return vm.Delete(dirs.Node(node))
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
// not run costs more than a look at /proc. A cluster whose deletion has begun gets none: the
// address and the process are added under the lock that Delete takes to mark it, so that
// neither is left behind.
func StartLoadBalancerIn(dirs Dirs, exe string) (bool, error) {
	if LoadBalancerRunning(dirs) {
		return false, nil
	}
	name := filepath.Base(dirs.Root)
	started, err := startUnlessAlive(lbArgs(exe, dirs), dirs.LoadBalancerPID(), dirs.LoadBalancerLog(), func() error {
		if dirs.isDeleting() {
			return fmt.Errorf("local cluster %s is being deleted: delete it again to finish", name)
		}
		spec, err := ReadSpec(dirs)
		if err != nil {
			return err
		}
		if spec.LoadBalancerIP == "" {
			return nil
		}
		return vm.AddHostAddress(netip.MustParseAddr(spec.LoadBalancerIP))
	})
	if err != nil {
		return false, fmt.Errorf("failed to start the load balancer of %s: %w", name, err)
	}
	return started, nil
}

// loadBalancerLock is the lock that starting the load balancer (startUnlessAlive's, beside its
// pid file) and beginning the cluster's deletion take.
func (d Dirs) loadBalancerLock() string { return d.LoadBalancerPID() + ".lock" }

// deleting marks a cluster whose deletion has begun: nothing starts its load balancer again.
func (d Dirs) deleting() string { return filepath.Join(d.Root, "deleting") }

// markDeleting marks the cluster as being deleted, under the lock that starting its load
// balancer takes.
func (d Dirs) markDeleting() error {
	return proc.WithLockIn(d.loadBalancerLock(), func() error { return os.WriteFile(d.deleting(), nil, 0o600) })
}

// isDeleting says whether the cluster's deletion has begun (and, if the directory is still there,
// not finished).
func (d Dirs) isDeleting() bool {
	_, err := os.Stat(d.deleting())
	return err == nil
}

// removeDir removes a deleted cluster's directory. It leaves the store's sight first, renamed
// into a directory of its own: the load balancer's lock and the deletion's mark are files in
// it, and a start racing a removal in place could find the directory without its mark and
// bring a load balancer back.
func (s Store) removeDir(dirs Dirs) error {
	gone, err := os.MkdirTemp(s.Root, ".deleted-")
	if err != nil {
		return err
	}
	if err := os.Rename(dirs.Root, filepath.Join(gone, filepath.Base(dirs.Root))); err != nil {
		_ = os.Remove(gone)
		return os.RemoveAll(dirs.Root)
	}
	return os.RemoveAll(gone)
}

// releaseHostAddress takes the address of a deleted cluster's load balancer back from the host,
// unless a load balancer still listens there: the cluster of another store on this host (a
// test's, another SLIPWAY_HOME's) laid out the same block, and taking its address would cut its
// nodes off their endpoint. Each store gives out its blocks alone; only what listens is shared.
func releaseHostAddress(ip string) error {
	addr := netip.MustParseAddr(ip)
	busy, err := listening(addr, APIServerPort)
	if err != nil || busy {
		return err
	}
	return vm.RemoveHostAddress(addr)
}

// listening says whether a TCP socket of this host's network namespace listens on exactly
// addr:port, as /proc/net/tcp lists them: a socket on 0.0.0.0 does not hold addr.
func listening(addr netip.Addr, port int) (bool, error) {
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return false, err
	}
	// The kernel writes the address as the hex of its 32 bits in the host's byte order
	// (little-endian: slipway builds for amd64), then the port; state 0A is LISTEN.
	a := addr.As4()
	want := fmt.Sprintf("%02X%02X%02X%02X:%04X", a[3], a[2], a[1], a[0], port)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && f[1] == want && f[3] == "0A" {
			return true, nil
		}
	}
	return false, nil
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
