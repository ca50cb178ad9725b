package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/local/proc"
)

// Host is the host of the local runtime as the infrastructure provider sees it: the store of
// its clusters and the processes that run them. A provider on the host uses the store itself
// (LocalHost); one in a container on a real node reaches the host through its node service
// (package nodeservice), as CAPD reaches Docker through its socket.
type Host interface {
	// ReadSpec returns a cluster's spec; an error wrapping os.ErrNotExist when there is none.
	ReadSpec(ctx context.Context, name string) (*Spec, error)
	// WriteSpec writes a cluster's spec, making its directory.
	WriteSpec(ctx context.Context, spec *Spec) error
	// FreeIndex returns the lowest address block no cluster uses.
	FreeIndex(ctx context.Context) (int, error)
	// PrepareNode writes the state of a node added to spec, which boots from the machine's
	// bootstrap data.
	PrepareNode(ctx context.Context, spec *Spec, node NodeSpec, userData []byte, registry string) error
	// StartNode starts a node unless it runs, and says whether it started it.
	StartNode(ctx context.Context, name string, node NodeSpec) (bool, error)
	// StopNode destroys a node and removes its state.
	StopNode(ctx context.Context, name, node string) error
	// StartLoadBalancer starts a cluster's load balancer unless it runs, and says whether it
	// started it.
	StartLoadBalancer(ctx context.Context, name string) (bool, error)
	// Delete stops every process of a cluster and removes its state; ErrNotFound when there is
	// no such cluster.
	Delete(ctx context.Context, name string) error
	// CheckHostLimits is Store.CheckHostLimits.
	CheckHostLimits(ctx context.Context, controlPlanes, workers int, report func(string)) error
	// EnsureNodeImage is Store.EnsureNodeImage.
	EnsureNodeImage(ctx context.Context, version string) (string, error)
	// ClusterOf names the cluster a node belongs to: the home of a provider that runs on it.
	ClusterOf(ctx context.Context, node string) (string, error)
}

// LocalHost is the Host a process on the host has: the store, and the slipway binary that runs
// nodes and load balancers.
type LocalHost struct {
	Store      Store
	Executable string
}

var _ Host = LocalHost{}

// ReadSpec implements Host.
func (h LocalHost) ReadSpec(_ context.Context, name string) (*Spec, error) {
	dirs, err := h.Store.Dirs(name)
	if err != nil {
		return nil, err
	}
	return ReadSpec(dirs)
}

// WriteSpec implements Host.
func (h LocalHost) WriteSpec(_ context.Context, spec *Spec) error {
	dirs, err := h.Store.Dirs(spec.Name)
	if err != nil {
		return err
	}
	return WriteSpec(dirs, spec)
}

// FreeIndex implements Host.
func (h LocalHost) FreeIndex(context.Context) (int, error) { return h.Store.FreeIndex() }

// PrepareNode implements Host.
func (h LocalHost) PrepareNode(_ context.Context, spec *Spec, node NodeSpec, userData []byte, registry string) error {
	dirs, err := h.Store.nodeDirs(spec.Name, node.Name)
	if err != nil {
		return err
	}
	if !spec.Real() {
		return errAgentCluster(spec.Name)
	}
	// The node boots from the bootstrap data as a VM does: kubeadm makes what it needs.
	return PrepareNodeState(dirs, spec, node, node.ProviderID, userData, registry)
}

// StartNode implements Host.
func (h LocalHost) StartNode(_ context.Context, name string, node NodeSpec) (bool, error) {
	return h.Store.StartNode(name, node, h.Executable)
}

// StopNode implements Host.
func (h LocalHost) StopNode(_ context.Context, name, node string) error {
	return h.Store.StopNode(name, node)
}

// StartLoadBalancer implements Host.
func (h LocalHost) StartLoadBalancer(_ context.Context, name string) (bool, error) {
	return h.Store.StartLoadBalancer(name, h.Executable)
}

// Delete implements Host.
func (h LocalHost) Delete(_ context.Context, name string) error { return h.Store.Delete(name, "") }

// CheckHostLimits implements Host.
func (h LocalHost) CheckHostLimits(_ context.Context, controlPlanes, workers int, report func(string)) error {
	return h.Store.CheckHostLimits(controlPlanes, workers, report)
}

// EnsureNodeImage implements Host.
func (h LocalHost) EnsureNodeImage(ctx context.Context, version string) (string, error) {
	return h.Store.EnsureNodeImage(ctx, version)
}

// ClusterOf implements Host.
func (h LocalHost) ClusterOf(_ context.Context, node string) (string, error) {
	specs, err := h.Store.List()
	if err != nil {
		return "", err
	}
	var names []string
	for _, spec := range specs {
		if _, ok := spec.Node(node); ok {
			names = append(names, spec.Name)
		}
	}
	switch len(names) {
	case 0:
		return "", fmt.Errorf("no local cluster of %s has a node %s: %w", h.Store.Root, node, os.ErrNotExist)
	case 1:
		return names[0], nil
	}
	return "", fmt.Errorf("node name %s is in local clusters %v: the provider on it cannot tell which cluster it runs in", node, names)
}

// NodeServiceDir is where the store's node service listens (NodeServiceSocket), which every
// real node binds at vm.NodeServicePath. The service's pid file and log are beside.
func (s Store) NodeServiceDir() string { return filepath.Join(s.Root, ".node-service") }

// NodeServiceSocket is the node service's socket in dir.
func NodeServiceSocket(dir string) string { return filepath.Join(dir, "node.sock") }

func nodeServiceArgs(exe, root string) []string {
	return []string{exe, "local", "node-service", "--store", root}
}

// EnsureNodeService starts the store's node service unless it runs, and says whether it started
// it. Whatever starts a real node starts it: a local infrastructure provider may come to run on
// the node.
func (s Store) EnsureNodeService(exe string) (bool, error) {
	dir := s.NodeServiceDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	started, err := startUnlessAlive(nodeServiceArgs(exe, s.Root), s.nodeServicePID(), filepath.Join(dir, "node-service.log"), nil)
	if err != nil {
		return false, fmt.Errorf("failed to start the node service of %s: %w", s.Root, err)
	}
	return started, nil
}

// WatchNodeService starts the node service of dirs' store again whenever it finds it dead, every
// interval until ctx ends, while the cluster of dirs is of real nodes. Each real cluster's load
// balancer runs it: a host process the infrastructure provider keeps running through the service,
// so that each of the two restarts the other, as systemd restarts a Docker host's daemon.
func WatchNodeService(ctx context.Context, dirs Dirs, exe string, interval time.Duration) {
	log := ctrl.LoggerFrom(ctx)
	store := storeOf(dirs)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		// A look at its pid comes first: EnsureNodeService takes the store's start lock.
		if store.NodeServiceRunning() {
			continue
		}
		if spec, err := ReadSpec(dirs); err != nil || !spec.Real() {
			continue
		}
		started, err := store.EnsureNodeService(exe)
		if err != nil {
			log.Error(err, "The node service is down and cannot be started again")
		} else if started {
			log.Info("Started the node service again: it was not running", "store", store.Root)
		}
	}
}

// WatchLoadBalancers starts again, every interval until ctx ends, the load balancer of each of the
// store's clusters of real nodes that no infrastructure provider owns (a plain cluster of several
// control-plane nodes) when it finds it dead, as Docker restarts the load balancer container of a
// kind cluster. A provider restarts those of the clusters it owns. The node service runs it, and
// each of those load balancers runs the node service again (WatchNodeService).
func (s Store) WatchLoadBalancers(ctx context.Context, exe string, interval time.Duration) {
	log := ctrl.LoggerFrom(ctx)
	// failed is the last failure to start each cluster's load balancer, logged once.
	failed := map[string]string{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		specs, err := s.List()
		if err != nil {
			continue
		}
		for _, spec := range specs {
			if spec.Owner != nil || spec.LoadBalancerIP == "" || !spec.Real() {
				continue
			}
			dirs, err := s.Dirs(spec.Name)
			if err != nil || dirs.isDeleting() || LoadBalancerRunning(dirs) {
				continue
			}
			started, err := StartLoadBalancerIn(dirs, exe)
			switch {
			case err != nil && failed[spec.Name] != err.Error():
				failed[spec.Name] = err.Error()
				log.Error(err, "The load balancer is down and cannot be started again", "cluster", spec.Name)
			case err == nil:
				delete(failed, spec.Name)
				if started {
					log.Info("Started the load balancer again: it was not running", "cluster", spec.Name, "endpoint", spec.Endpoint())
				}
			}
		}
	}
}

func (s Store) nodeServicePID() string { return filepath.Join(s.NodeServiceDir(), "node-service.pid") }

// NodeServiceRunning says whether the store's node service runs.
func (s Store) NodeServiceRunning() bool {
	return proc.Alive(s.nodeServicePID(), nodeServiceArgs("", s.Root))
}

// stopNodeServiceWhenIdle stops the store's node service when no cluster of real nodes is left
// in it: nothing can call it then.
func (s Store) stopNodeServiceWhenIdle() error {
	specs, err := s.List()
	if err != nil {
		return err
	}
	for _, spec := range specs {
		if spec.Real() {
			return nil
		}
	}
	if !s.NodeServiceRunning() {
		return os.RemoveAll(s.NodeServiceDir())
	}
	if err := proc.Terminate([]int{proc.ReadPID(s.nodeServicePID())}, 10*time.Second); err != nil {
		return fmt.Errorf("failed to stop the node service of %s: %w", s.Root, err)
	}
	return os.RemoveAll(s.NodeServiceDir())
}
