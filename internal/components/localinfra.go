package components

import (
	"context"
	"errors"
	"os"

	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/infrastructure"
	"github.com/slipway-dev/slipway/internal/local/podenv"
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
	store := os.Getenv(podenv.EnvLocalStore)
	if store == "" {
		return errors.New("the local infrastructure provider makes clusters on the host of the local runtime and runs only there: " +
			podenv.EnvLocalStore + " is not set")
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	mgr, err := newCAPIManager(f, "capl-controller-leader-election", scheme.New(), false)
	if err != nil {
		return err
	}
	rt := &infrastructure.Runtime{Store: cluster.Store{Root: store}, Executable: exe, Home: os.Getenv(podenv.EnvLocalCluster)}
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
