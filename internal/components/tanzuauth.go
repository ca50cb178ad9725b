package components

import (
	"context"
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/controllers/tanzuauth"
)

// tanzuAuthManager is TKG's tanzu-auth-controller-manager (image tanzu-auth-controller-manager):
// the cascade controller that writes workload clusters' pinniped values.
func tanzuAuthManager() Component {
	return Component{Name: "tanzu-auth", Run: runTanzuAuthManager}
}

func runTanzuAuthManager(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("tanzu-auth", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":18322")
	flags.Bool("disable-cascade-v1alpha1", true, "accepted for compatibility: slipway's clusters are ClusterClass clusters, whose values the v1alpha3 cascade writes")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, false, func(mgr ctrl.Manager) error {
		return (&tanzuauth.CascadeReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
}
