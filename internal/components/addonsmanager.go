package components

import (
	"context"
	"flag"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/controllers/addons/clusterbootstrap"
	"github.com/slipway-dev/slipway/internal/controllers/addons/clustermetadata"
	"github.com/slipway-dev/slipway/internal/controllers/addons/configs"
	"github.com/slipway-dev/slipway/internal/controllers/addons/webhooks"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// addonsManager is TKG's tanzu-addons-manager (image addons-controller): the ClusterBootstrap,
// ClusterMetadata and *Config controllers and the addons webhooks (ClusterBootstrap, ClusterBootstrapTemplate,
// AntreaConfig, Cluster pause).
func addonsManager() Component {
	return Component{
		Name: "tanzu-addons-manager",
		Run:  runAddonsManager,
	}
}

func runAddonsManager(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("tanzu-addons-manager", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":18316")
	systemNamespace := flags.String("system-namespace", tkg.SystemNamespace, "namespace of the ClusterBootstrapTemplates and release Packages")
	deleteTimeout := flags.Duration("cluster-delete-timeout", clusterbootstrap.DefaultDeleteTimeout, "how long a Cluster's deletion waits for its additional packages to be removed")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, true, func(mgr ctrl.Manager) error {
		clusterCache, _, err := setupClusterCache(ctx, mgr, "tanzu-addons-manager", "")
		if err != nil {
			return fmt.Errorf("failed to set up the cluster cache: %w", err)
		}
		if err := (&clusterbootstrap.Reconciler{Client: mgr.GetClient(), ClusterCache: clusterCache, SystemNamespace: *systemNamespace,
			DeleteTimeout: *deleteTimeout}).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("failed to set up the ClusterBootstrap controller: %w", err)
		}
		if err := (&clustermetadata.Reconciler{Client: mgr.GetClient(), ClusterCache: clusterCache}).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("failed to set up the cluster metadata controller: %w", err)
		}
		if err := configs.SetupAll(mgr); err != nil {
			return fmt.Errorf("failed to set up the config controllers: %w", err)
		}
		for _, w := range []interface{ SetupWebhookWithManager(ctrl.Manager) error }{
			&webhooks.AntreaConfig{},
			&webhooks.ClusterBootstrapTemplate{SystemNamespace: *systemNamespace},
			&webhooks.ClusterBootstrap{SystemNamespace: *systemNamespace},
			&webhooks.ClusterPause{},
		} {
			if err := w.SetupWebhookWithManager(mgr); err != nil {
				return fmt.Errorf("failed to set up webhook %T: %w", w, err)
			}
		}
		return nil
	})
}
