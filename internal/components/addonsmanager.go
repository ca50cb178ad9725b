package components

import (
	"context"
	"flag"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/addons/webhooks"
)

// addonsManager is TKG's tanzu-addons-manager (image addons-controller). So far it serves the
// AntreaConfig validating webhook; the ClusterBootstrap and *Config controllers join it with
// the addons manager.
func addonsManager() Component {
	return Component{
		Name:   "tanzu-addons-manager",
		Images: []string{"addons-controller", "tanzu-addons-manager"},
		Run:    runAddonsManager,
	}
}

func runAddonsManager(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("tanzu-addons-manager", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":18316")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, true, func(mgr ctrl.Manager) error {
		if err := (&webhooks.AntreaConfig{}).SetupWebhookWithManager(mgr); err != nil {
			return fmt.Errorf("failed to set up the AntreaConfig webhook: %w", err)
		}
		return nil
	})
}
