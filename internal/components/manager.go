package components

import (
	"context"
	"flag"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/slipway-dev/slipway/internal/scheme"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// managerFlags are the flags TKG's controller managers share.
type managerFlags struct {
	metricsAddr      *string
	healthAddr       *string
	webhookPort      *int
	certDir          *string
	webhookService   *string
	webhookNamespace *string
	webhookConfigs   *string
}

func addManagerFlags(flags *flag.FlagSet, healthAddr string) managerFlags {
	return managerFlags{
		metricsAddr: flags.String("metrics-bind-addr", "0", "address of the metrics endpoint; 0 turns it off"),
		healthAddr:  flags.String("health-addr", healthAddr, "address of the health endpoint"),
		webhookPort: flags.Int("webhook-server-port", 9443, "port of the webhook server"),
		certDir:     flags.String("tls-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory of the webhook server's tls.crt and tls.key"),
		webhookService: flags.String("webhook-service-name", "", "when set, the component makes its own serving certificate for this Service "+
			"(in --webhook-service-namespace) into --tls-cert-dir and sets the caBundle of --webhook-configurations"),
		webhookNamespace: flags.String("webhook-service-namespace", tkg.SystemNamespace, "namespace of --webhook-service-name"),
		webhookConfigs:   flags.String("webhook-configurations", "", "comma-separated Mutating- and ValidatingWebhookConfigurations, and CRDs with a conversion webhook, whose caBundle the component sets"),
	}
}

// runManager creates a manager in the current pod, lets setup register controllers and webhooks,
// and runs it. With webhooks, health and readiness wait for the webhook server.
func runManager(ctx context.Context, f managerFlags, webhooks bool, setup func(ctrl.Manager) error) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	opts := ctrl.Options{
		Scheme:                 scheme.New(),
		Metrics:                metricsserver.Options{BindAddress: *f.metricsAddr},
		HealthProbeBindAddress: *f.healthAddr,
	}
	var certs *webhookCerts
	if webhooks {
		certDir := *f.certDir
		if *f.webhookService != "" {
			certs = &webhookCerts{service: *f.webhookService, namespace: *f.webhookNamespace, configurations: parseList(*f.webhookConfigs)}
			if err := certs.write(certDir); err != nil {
				return fmt.Errorf("failed to make the webhook serving certificate: %w", err)
			}
		}
		opts.WebhookServer = webhook.NewServer(webhook.Options{Port: *f.webhookPort, CertDir: certDir})
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return fmt.Errorf("failed to create manager: %w", err)
	}
	if err := setup(mgr); err != nil {
		return err
	}
	if certs != nil {
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			certs.Start(ctx, mgr.GetClient())
			return nil
		})); err != nil {
			return err
		}
	}
	// Ready once running; with webhooks, once the webhook server serves and, when the component
	// sets its webhooks' caBundle, once that is set.
	check := healthz.Ping
	if webhooks {
		check = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddHealthzCheck("healthy", check); err != nil {
		return err
	}
	if certs != nil {
		if err := mgr.AddReadyzCheck("webhook-ca", certs.ready); err != nil {
			return err
		}
	}
	if err := mgr.AddReadyzCheck("ready", check); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
