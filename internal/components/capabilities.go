package components

import (
	"context"
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/controllers/capabilities"
)

// capabilitiesManager is TKG's tanzu-capabilities-controller-manager (image
// capabilities-controller-manager): it answers Capability queries.
func capabilitiesManager() Component {
	return Component{Name: "tanzu-capabilities", Run: runCapabilitiesManager}
}

func runCapabilitiesManager(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("tanzu-capabilities", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":18324")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, false, func(mgr ctrl.Manager) error {
		return (&capabilities.Reconciler{Client: mgr.GetClient(), Config: mgr.GetConfig()}).SetupWithManager(mgr)
	})
}
