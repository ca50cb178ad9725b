package components

import (
	"context"
	"flag"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/slipway-dev/slipway/config/crd"
	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/controllers/packaging/app"
	"github.com/slipway-dev/slipway/internal/controllers/packaging/packageinstall"
	"github.com/slipway-dev/slipway/internal/controllers/packaging/packagerepository"
	"github.com/slipway-dev/slipway/internal/scheme"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// kappController is slipway's package controller in the place of kapp-controller (image
// kapp-controller): it reconciles Apps, PackageInstalls and PackageRepositories, and installs
// their CRDs (Package and PackageMetadata included, which kapp-controller serves from an
// aggregated API) when it starts.
func kappController() Component {
	return Component{
		Name: "kapp-controller",
		Run:  runKappController,
	}
}

func runKappController(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("kapp-controller", flag.ContinueOnError)
	globalNamespace := flags.String("packaging-global-namespace", tkg.PackageRepoGlobalNamespace, "namespace whose Packages every namespace sees")
	concurrency := flags.Int("concurrency", 4, "reconciles run at once, per kind")
	metricsAddr := flags.String("metrics-bind-address", "0", "address of the metrics endpoint; 0 turns it off")
	// kapp-controller's flags that have no meaning here are accepted, so that its manifests run
	// unchanged.
	flags.Int("api-port", 10350, "kapp-controller's aggregated API port (not served: Package and PackageMetadata are CRDs)")
	flags.String("tls-cipher-suites", "", "accepted for compatibility")
	flags.Bool("enable-api-priority-and-fairness", true, "accepted for compatibility")
	flags.Bool("start-api-server", true, "accepted for compatibility")
	if err := flags.Parse(args); err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	s := scheme.New()
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	if err := installCRDs(ctx, c); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     s,
		Metrics:    metricsserver.Options{BindAddress: *metricsAddr},
		Controller: config.Controller{MaxConcurrentReconciles: *concurrency},
	})
	if err != nil {
		return fmt.Errorf("failed to create manager: %w", err)
	}
	// Registries are trusted as kapp-controller's configuration Secret in its namespace says.
	trust := &fetch.ConfigTrust{Client: mgr.GetClient(), Key: client.ObjectKey{Namespace: podNamespace(), Name: fetch.KappControllerConfig}, Secret: true}
	if err := (&app.Reconciler{Client: mgr.GetClient(), Config: cfg, Trust: trust}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&packageinstall.Reconciler{Client: mgr.GetClient(), GlobalNamespace: *globalNamespace}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&packagerepository.Reconciler{Client: mgr.GetClient(), Trust: trust}).SetupWithManager(mgr); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// installCRDs creates or updates kapp-controller's CRDs and waits until they are established.
func installCRDs(ctx context.Context, c client.Client) error {
	crds, err := crd.Carvel()
	if err != nil {
		return err
	}
	for _, def := range crds {
		def.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		existing := &apiextensionsv1.CustomResourceDefinition{}
		err := c.Get(ctx, client.ObjectKeyFromObject(def), existing)
		switch {
		case apierrors.IsNotFound(err):
			err = c.Create(ctx, def)
		case err == nil:
			def.ResourceVersion = existing.ResourceVersion
			err = c.Update(ctx, def)
		}
		if err != nil {
			return fmt.Errorf("failed to install CRD %s: %w", def.Name, err)
		}
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, def := range crds {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(def), got); err != nil {
				return false, nil
			}
			established := false
			for _, cond := range got.Status.Conditions {
				established = established || (cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue)
			}
			if !established {
				return false, nil
			}
		}
		return true, nil
	})
}
