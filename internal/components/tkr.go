package components

import (
	"context"
	"flag"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/conversion"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/resolver"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/source"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/status"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/vsphere"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// tkrSourceController is TKG's tkr-source-controller: it fetches the TKR catalogue from the
// registry, installs the TKR packages and sets each release's Compatible condition. Its flags
// are TKG's.
func tkrSourceController() Component {
	return Component{Name: "tkr-source-controller", Run: runTKRSourceController}
}

func runTKRSourceController(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("tkr-source-controller", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":18317")
	namespace := flags.String("namespace", tkg.SystemNamespace, "namespace of the TKR packages and what they hold")
	compatibilityImage := flags.String("bom-metadata-image-path", "", "repository of the compatibility metadata image, tagged v1, v2, …")
	repoImage := flags.String("tkr-repo-image-path", "", "repository of the TKR package repository bundles, tagged by release version")
	initial := flags.Int("initial-discover-frequency", 60, "seconds between discovery attempts until one succeeds")
	continuous := flags.Int("continuous-discover-frequency", 600, "seconds between discoveries")
	flags.String("bom-image-path", "", "accepted for compatibility: slipway keeps no BOM ConfigMaps")
	flags.String("legacy-namespace", "", "accepted for compatibility")
	flags.String("sa-name", "", "accepted for compatibility")
	skipVerify := flags.Bool("skip-verify-registry-cert", false, "do not verify the certificates of the registries of the two images (TKG_CUSTOM_IMAGE_REPOSITORY_SKIP_TLS_VERIFY); CA certificates come from ConfigMap tkr-controller-config, key caCerts")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, false, func(mgr ctrl.Manager) error {
		compat := &source.Compatibility{Client: mgr.GetClient(), Namespace: *namespace}
		trust := &fetch.ConfigTrust{Client: mgr.GetClient(), Key: client.ObjectKey{Namespace: *namespace, Name: fetch.TKRControllerConfig}}
		if *skipVerify {
			trust.SkipVerify = []string{registryOf(*compatibilityImage), registryOf(*repoImage)}
		}
		fetcher := &source.Fetcher{
			Client: mgr.GetClient(), Compatibility: compat,
			CompatibilityImage: *compatibilityImage, TKRRepositoryImage: *repoImage,
			InitialInterval: time.Duration(*initial) * time.Second, Interval: time.Duration(*continuous) * time.Second,
			Trust: trust,
		}
		if err := fetcher.SetupWithManager(mgr); err != nil {
			return err
		}
		if err := (&source.PackageReconciler{Client: mgr.GetClient(), Namespace: *namespace, Trust: trust}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&source.CompatibilityReconciler{Client: mgr.GetClient(), Compatibility: compat}).SetupWithManager(mgr)
	})
}

// tkrStatusController is TKG's tkr-status-controller: release and OSImage labels, the Valid and
// Ready conditions, and each Cluster's UpdatesAvailable condition.
func tkrStatusController() Component {
	return Component{Name: "tkr-status-controller", Run: runTKRStatusController}
}

func runTKRStatusController(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("tkr-status-controller", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":18318")
	namespace := flags.String("namespace", tkg.SystemNamespace, "namespace of the releases' ClusterBootstrapTemplates and bootstrap Packages")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, false, func(mgr ctrl.Manager) error {
		if err := (&status.TKRReconciler{Client: mgr.GetClient(), Namespace: *namespace}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&status.ClusterReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
}

// tkrResolverWebhook is TKG's tkr-resolver-cluster-webhook: the mutating webhook that resolves
// topology Clusters to a release.
func tkrResolverWebhook() Component {
	return Component{Name: "tkr-resolver-cluster-webhook", Run: runTKRResolverWebhook}
}

func runTKRResolverWebhook(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("tkr-resolver-cluster-webhook", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":18319")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, true, func(mgr ctrl.Manager) error {
		return (&resolver.ClusterDefaulter{Client: mgr.GetClient()}).SetupWebhookWithManager(mgr)
	})
}

// tkrVSphereResolver is TKG's tkr-vsphere-resolver-webhook-manager (image
// tkr-vsphere-resolver-webhook): the mutating webhook that finds the VM templates of resolved
// Clusters' OVA images in their vCenter.
func tkrVSphereResolver() Component {
	return Component{Name: "tkr-vsphere-resolver-webhook", Run: runTKRVSphereResolver}
}

func runTKRVSphereResolver(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("tkr-vsphere-resolver-webhook", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":18323")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, true, func(mgr ctrl.Manager) error {
		return (&vsphere.TemplateResolver{Client: mgr.GetClient()}).SetupWebhookWithManager(mgr)
	})
}

// tkrConversionWebhook is TKG's tkr-conversion-webhook-manager: it converts releases between
// the v1alpha1 and v1alpha2 shapes and the stored v1alpha3, for clients of TKG 1.x and vSphere
// with Tanzu.
func tkrConversionWebhook() Component {
	return Component{Name: "tkr-conversion-webhook", Run: runTKRConversionWebhook}
}

func runTKRConversionWebhook(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("tkr-conversion-webhook", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":18325")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, true, func(mgr ctrl.Manager) error {
		return conversion.SetupWebhookWithManager(mgr)
	})
}

// registryOf is the registry host of an image repository such as registry.example.com/tkg/x.
func registryOf(repository string) string {
	repo, err := name.NewRepository(repository)
	if err != nil {
		return ""
	}
	return repo.RegistryStr()
}
