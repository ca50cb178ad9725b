package infrastructure

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// HomeSupervisor keeps the nodes of the local cluster the provider runs in going when that
// cluster is not one of a Cluster's (a bootstrap or cleanup cluster, made by the CLI; the
// machines of a management cluster are its own LocalMachines, which the MachineReconciler
// supervises). A node's init process killed with SIGKILL leaves its pods, this provider among
// them, running: the provider starts the node again within superviseEvery, through the store's
// node service, reset as a VM whose kernel died, and the node restarts what it ran.
type HomeSupervisor struct {
	Runtime *Runtime
}

// NeedLeaderElection is false: a provider that has just restarted waits for the lease of its
// killed predecessor to expire, and the home cluster's nodes must not wait with it. The store
// starts a node under a lock, so two providers never start two.
func (HomeSupervisor) NeedLeaderElection() bool { return false }

// Start supervises until ctx ends.
func (h HomeSupervisor) Start(ctx context.Context) error {
	r := h.Runtime
	if r.Home == "" {
		<-ctx.Done()
		return nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("cluster", r.Home)
	restarts := 0
	tick := time.NewTicker(superviseEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		// A cluster being deleted has no spec left: its nodes are powered off, this provider
		// with them.
		spec, err := r.Host.ReadSpec(ctx, r.Home)
		if err != nil || spec.Owner != nil {
			continue
		}
		for _, n := range spec.Nodes {
			started, err := r.Host.StartNode(ctx, spec.Name, n)
			if err != nil {
				log.Error(err, "Failed to start a node of the home cluster", "node", n.Name)
				continue
			}
			if started {
				restarts++
				log.Info("The init process of a node of the home cluster was not running: started the node again", "node", n.Name, "restarts", restarts)
			}
		}
	}
}
