package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/internal/local/proc"
)

// agentArgs are the arguments of a node agent; agentMarker finds them in /proc.
func agentArgs(exe string, dirs Dirs, node string) []string {
	return []string{exe, "local", "node", "run", "--node", node, "--cluster-dir", dirs.Root}
}

func lbArgs(exe string, dirs Dirs) []string {
	return []string{exe, "local", "lb", "run", "--cluster-dir", dirs.Root}
}

// startProcesses starts the load balancer and every node agent that does not run, and returns
// the nodes it started.
func (s Store) startProcesses(dirs Dirs, spec *Spec, exe string) ([]NodeSpec, error) {
	if spec.LoadBalancerIP != "" && !proc.Alive(dirs.LoadBalancerPID(), lbMarker(dirs)) {
		if _, err := proc.SpawnDetached(lbArgs(exe, dirs), dirs.LoadBalancerLog(), dirs.LoadBalancerPID()); err != nil {
			return nil, err
		}
	}
	var started []NodeSpec
	for _, n := range spec.Nodes {
		if proc.Alive(dirs.NodePID(n.Name), agentMarker(dirs, n.Name)) {
			continue
		}
		logPath := dirs.NodeLogs(n.Name) + "/agent.log"
		if _, err := proc.SpawnDetached(agentArgs(exe, dirs, n.Name), logPath, dirs.NodePID(n.Name)); err != nil {
			return nil, fmt.Errorf("failed to start node %s: %w", n.Name, err)
		}
		started = append(started, n)
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
	dirs := s.Dirs(name)
	started := time.Now()
	restarted, err := s.startProcesses(dirs, spec, exe)
	if err != nil {
		return err
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
	dirs := s.Dirs(name)
	if _, err := os.Stat(dirs.Root); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("local cluster %q %w: `slipway local cluster list` shows the clusters there are", name, ErrNotFound)
	}
	// Agents stop their pods and static components on SIGTERM; whatever still mentions the
	// cluster's directory afterwards is killed.
	var agents []int
	if spec, err := ReadSpec(dirs); err == nil {
		for _, n := range spec.Nodes {
			if proc.Alive(dirs.NodePID(n.Name), agentMarker(dirs, n.Name)) {
				agents = append(agents, proc.ReadPID(dirs.NodePID(n.Name)))
			}
		}
	}
	var errs []error
	if err := proc.Terminate(agents, 30*time.Second); err != nil {
		errs = append(errs, err)
	}
	if err := proc.Terminate(proc.Mentioning(dirs.Root+"/"), 10*time.Second); err != nil {
		errs = append(errs, err)
	}
	if err := proc.Terminate(proc.Mentioning(dirs.Root), 10*time.Second); err != nil {
		errs = append(errs, err)
	}
	if err := os.RemoveAll(dirs.Root); err != nil {
		errs = append(errs, err)
	}
	if kubeconfig != "" {
		if err := RemoveFromKubeconfig(name, kubeconfig); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
