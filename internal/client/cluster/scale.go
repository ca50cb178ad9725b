package cluster

import (
	"context"
	"fmt"

	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/progress"
)

// ScaleOptions are what Scale takes; a count of zero is left as it is.
type ScaleOptions struct {
	ControlPlane, Workers int
	// NodePool names the machine deployment the workers go to; empty spreads them over all,
	// the first ones taking the remainder, as TKG does.
	NodePool string
	// CheckHost checks that this host can start the nodes a cluster of the local provider
	// gains (localcluster.Store.CheckHostLimits); nil checks nothing.
	CheckHost HostCheck
}

// HostCheck checks that this host can start a number of a local cluster's nodes; it prints its warnings (a limit it raised, one that is close) with p, where
// the flow prints its own lines.
type HostCheck func(p *progress.Printer, controlPlanes, workers int) error

// Scale sets the replicas of a ClusterClass cluster's control plane and workers, in two steps
// (host capacity, scale) once the counts are known to be valid. It does not wait, as TKG:
// `cluster list` shows the cluster updating until the machines are there.
func Scale(ctx context.Context, c client.Client, key client.ObjectKey, o ScaleOptions, p *progress.Printer) error {
	if o.ControlPlane < 0 || o.Workers < 0 || o.ControlPlane == 0 && o.Workers == 0 {
		return fmt.Errorf("incorrect machine counts provided. Machine count value for control-plane and workers must be greater than 0")
	}
	if o.ControlPlane > 0 && o.ControlPlane%2 == 0 {
		return fmt.Errorf("the number of control plane machines should be an odd number but provided %d", o.ControlPlane)
	}
	cl, err := getCluster(ctx, c, key)
	if err != nil {
		return err
	}
	before := cl.DeepCopy()
	if o.ControlPlane > 0 {
		cl.Spec.Topology.ControlPlane.Replicas = ptr.To(int32(o.ControlPlane))
	}
	if o.Workers > 0 {
		mds := cl.Spec.Topology.Workers.MachineDeployments
		if o.NodePool != "" {
			found := false
			for i := range mds {
				if mds[i].Name == o.NodePool {
					mds[i].Replicas, found = ptr.To(int32(o.Workers)), true
				}
			}
			if !found {
				return fmt.Errorf("could not find node pool with name %s", o.NodePool)
			}
		} else {
			if o.Workers < len(mds) {
				return fmt.Errorf("new worker count must be greater than or equal to the number of machine deployments. worker count: %d, machine deployment count: %d", o.Workers, len(mds))
			}
			for i := range mds {
				n := o.Workers / len(mds)
				if i < o.Workers%len(mds) {
					n++
				}
				mds[i].Replicas = ptr.To(int32(n))
			}
		}
	}
	return p.Run(ctx,
		progress.NamedStep{Name: "host capacity", Run: func(ctx context.Context) error {
			return checkAdded(ctx, c, before, cl, o.CheckHost, p)
		}},
		progress.NamedStep{Name: "scale", Run: func(ctx context.Context) error {
			if err := c.Patch(ctx, cl, client.MergeFrom(before)); err != nil {
				return fmt.Errorf("failed to set the replicas of cluster %s: %w", klog.KRef(key.Namespace, key.Name), err)
			}
			p.Infof("Workload cluster '%s' is being scaled", key.Name)
			return nil
		}},
	)
}

// checkAdded checks the host for the nodes a change of a local provider's cluster from before to
// after adds; a change that adds none (a scale down) is not checked, nor is any other provider's.
func checkAdded(ctx context.Context, c client.Client, before, after *clusterv1.Cluster, check HostCheck, p *progress.Printer) error {
	if after.Spec.InfrastructureRef.Kind != "LocalCluster" {
		return nil
	}
	cp, w := added(before, after)
	return checkLocalHost(check, p, cp, w)
}

// added returns the control-plane machines and workers a change of the topology from before to
// after adds (a scale, a new or grown node pool). A pool without replicas is left to an
// autoscaler, and counts none.
func added(before, after *clusterv1.Cluster) (controlPlanes, workers int) {
	more := func(from, to *int32) int { return max(0, int(ptr.Deref(to, 0)-ptr.Deref(from, 0))) }
	controlPlanes = more(before.Spec.Topology.ControlPlane.Replicas, after.Spec.Topology.ControlPlane.Replicas)
	// A pool matches the one of its name; a new pool adds all its replicas.
	for _, md := range after.Spec.Topology.Workers.MachineDeployments {
		var from *int32
		for _, old := range before.Spec.Topology.Workers.MachineDeployments {
			if old.Name == md.Name {
				from = old.Replicas
			}
		}
		workers += more(from, md.Replicas)
	}
	return controlPlanes, workers
}
