package components

import (
	"context"
	"flag"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/slipway-dev/slipway/internal/addons/webhooks"
	"github.com/slipway-dev/slipway/internal/scheme"
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
	metricsAddr := flags.String("metrics-bind-addr", "0", "address of the metrics endpoint; 0 turns it off")
	healthAddr := flags.String("health-addr", ":18316", "address of the health endpoint")
	webhookPort := flags.Int("webhook-server-port", 9443, "port of the webhook server")
	certDir := flags.String("tls-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory of the webhook server's tls.crt and tls.key")
	if err := flags.Parse(args); err != nil {
		return err
	}
	pod, cfg, err := CurrentPodConfig()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme.New(),
		Metrics:                metricsserver.Options{BindAddress: pod.BindAddress(*metricsAddr)},
		HealthProbeBindAddress: pod.BindAddress(*healthAddr),
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    pod.IP,
			Port:    *webhookPort,
			CertDir: pod.Path(*certDir),
		}),
	})
	if err != nil {
		return fmt.Errorf("failed to create manager: %w", err)
	}
	if err := (&webhooks.AntreaConfig{}).SetupWebhookWithManager(mgr); err != nil {
		return fmt.Errorf("failed to set up the AntreaConfig webhook: %w", err)
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
