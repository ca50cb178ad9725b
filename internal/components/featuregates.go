package components

import (
	"context"
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/controllers/featuregates"
)

// featureGatesManager is TKG's tanzu-featuregates-controller-manager (image
// featuregates-controller-manager): the Feature and FeatureGate controllers and the FeatureGate
// validating webhook.
func featureGatesManager() Component {
	return Component{Name: "tanzu-featuregates", Run: runFeatureGatesManager}
}

func runFeatureGatesManager(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("tanzu-featuregates", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":18320")
	flags.String("tls-min-version", "1.2", "accepted for compatibility: the webhook server uses controller-runtime's default, TLS 1.2")
	flags.String("tls-cipher-suites", "", "accepted for compatibility: the webhook server uses Go's default cipher suites")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, true, func(mgr ctrl.Manager) error {
		if err := (&featuregates.FeatureReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
			return err
		}
		if err := (&featuregates.FeatureGateReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&featuregates.FeatureGateValidator{Client: mgr.GetClient()}).SetupWebhookWithManager(mgr)
	})
}
