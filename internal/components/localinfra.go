package components

import (
	"context"
	"fmt"
	"os"

	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/infrastructure"
	"github.com/slipway-dev/slipway/internal/local/nodeservice"
	"github.com/slipway-dev/slipway/internal/local/vm"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// localInfrastructureController is the `local` Cluster API infrastructure provider (image
// capl-controller): LocalClusters and LocalMachines become local clusters and their nodes.
func localInfrastructureController() Component {
	return Component{Name: "local-infrastructure-controller", Run: runLocalInfrastructure}
}

func runLocalInfrastructure(ctx context.Context, args []string) error {
	f := newCAPIFlags("local-infrastructure-controller")
	if err := f.parse(args); err != nil {
		return err
	}
	rt, err := localRuntime(ctx)
	if err != nil {
		return err
	}
	mgr, err := newCAPIManager(f, "capl-controller-leader-election", scheme.New(), false)
	if err != nil {
		return err
	}
	recorder := mgr.GetEventRecorder("local-infrastructure-controller")
	if err := (&infrastructure.ClusterReconciler{Client: mgr.GetClient(), Runtime: rt, Recorder: recorder, WatchFilterValue: *f.watchFilter}).SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	if err := (&infrastructure.MachineReconciler{Client: mgr.GetClient(), Runtime: rt, Recorder: recorder, WatchFilterValue: *f.watchFilter}).SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	if err := mgr.Add(infrastructure.HomeSupervisor{Runtime: rt}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// envNodeName is the pod's spec.nodeName, which the provider's Deployment gives its container
// through the downward API: the node service finds by it the cluster the provider runs in.
const envNodeName = "NODE_NAME"

// localRuntime is the host the provider makes clusters on: the host's node service, which a node
// binds at vm.NodeServicePath and the provider's Deployment mounts there.
func localRuntime(ctx context.Context) (*infrastructure.Runtime, error) {
	socket := cluster.NodeServiceSocket(vm.NodeServicePath)
	if _, err := os.Stat(socket); err != nil {
		return nil, fmt.Errorf("the local infrastructure provider makes clusters on the host of the local runtime: it runs on a node of it, whose node service it reaches at %s (a hostPath volume of %s): %w",
			socket, vm.NodeServicePath, err)
	}
	host := nodeservice.NewClient(socket)
	node := os.Getenv(envNodeName)
	if node == "" {
		return nil, fmt.Errorf("%s is not set: the provider's Deployment gives it the pod's spec.nodeName, by which the node service finds the cluster the provider runs in", envNodeName)
	}
	home, err := host.ClusterOf(ctx, node)
	if err != nil {
		return nil, err
	}
	return &infrastructure.Runtime{Host: host, Home: home}, nil
}
