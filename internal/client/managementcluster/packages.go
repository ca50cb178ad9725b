package managementcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/client/packaging"
	"github.com/slipway-dev/slipway/internal/client/tkr"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/source"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// metaPackageValues are tkg-pkg's values for this repository and provider. The releases the
// compatibility metadata lists for tkg-pkg's TKG version are made compatible, as TKG does on a
// bootstrap cluster, where no management cluster says its TKG version yet.
func metaPackageValues(o Options, tkgVersion string) ([]byte, []string, error) {
	compatibility, err := ImageBeside(o.Repository.Ref, "tkr-compatibility")
	if err != nil {
		return nil, nil, err
	}
	tkrRepository, err := ImageBeside(o.Repository.Ref, "tkr-repository")
	if err != nil {
		return nil, nil, err
	}
	metadata := &source.CompatibilityMetadata{}
	if err := yaml.Unmarshal(o.Repository.compatibility, metadata); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", compatibility, err)
	}
	tkrs, found := metadata.SupportedBy(tkgVersion)
	if !found || len(tkrs) == 0 {
		return nil, nil, fmt.Errorf("the TKR compatibility metadata %s lists no Kubernetes release for TKG %s (the version of %s): add an entry for it to packages/tkr/compatibility.yaml", compatibility, tkgVersion, MetaPackageRefName)
	}
	values, err := yaml.Marshal(map[string]any{
		"namespace":                tkg.SystemNamespace,
		"infrastructureProvider":   o.InfrastructureProvider,
		"additionalCompatibleTKRs": tkrs,
		"tkrSourceController": map[string]any{
			"compatibilityImage":          compatibility,
			"tkrRepositoryImage":          tkrRepository,
			"initialDiscoverFrequency":    10,
			"continuousDiscoverFrequency": 600,
			"caCerts":                     o.Repository.trust.CACerts,
			"skipVerifyRegistryCert":      len(o.Repository.trust.SkipVerify) > 0,
		},
	})
	return values, tkrs, err
}

// InstallManagementPackages adds the management package repository, installs tkg-pkg and waits
// for it, for every PackageInstall it made and for the releases it makes compatible. It returns
// tkg-pkg's TKG version.
func InstallManagementPackages(ctx context.Context, c client.Client, o Options) (string, error) {
	if err := addManagementRepository(ctx, c, o); err != nil {
		return "", err
	}
	return installMetaPackage(ctx, c, o)
}

// addManagementRepository adds (or updates) the management package repository and waits until
// kapp-controller has fetched it.
func addManagementRepository(ctx context.Context, c client.Client, o Options) error {
	pc := &packaging.Client{C: c, Progress: o.Progress}
	return pc.RepositoryAdd(ctx, packaging.RepositoryOptions{Name: ManagementRepository, Namespace: tkg.SystemNamespace, URL: o.Repository.Ref,
		CreateNamespace: true, Wait: true, WaitTimeout: o.Timeout})
}

// installMetaPackage installs tkg-pkg from the management package repository and waits for it,
// for every PackageInstall it made and for the releases it makes compatible. It returns tkg-pkg's
// TKG version.
func installMetaPackage(ctx context.Context, c client.Client, o Options) (string, error) {
	pc := &packaging.Client{C: c, Progress: o.Progress}
	versions, err := pc.AvailableVersions(ctx, MetaPackageRefName, tkg.SystemNamespace)
	if err != nil {
		return "", err
	}
	if len(versions) == 0 {
		return "", fmt.Errorf("the management package repository %s has no package %s", o.Repository.Ref, MetaPackageRefName)
	}
	version := versions[len(versions)-1].Version
	// tkg-pkg's version is the TKG version it makes.
	values, tkrs, err := metaPackageValues(o, "v"+version)
	if err != nil {
		return "", err
	}
	install := packaging.InstallOptions{Name: MetaPackage, Namespace: tkg.SystemNamespace, PackageName: MetaPackageRefName, Version: version, Values: values}
	// A run resumed on a kept bootstrap cluster (-e) finds tkg-pkg installed: it is brought to
	// this run's version and values.
	err = c.Get(ctx, client.ObjectKey{Namespace: tkg.SystemNamespace, Name: MetaPackage}, &pkgingv1alpha1.PackageInstall{})
	switch {
	case err == nil:
		err = pc.InstalledUpdate(ctx, install)
	case apierrors.IsNotFound(err):
		if err = pc.InstalledCreate(ctx, install); err == nil {
			o.Progress.Infof("Added installed package '%s'", MetaPackage)
		}
	}
	if err != nil {
		return "", err
	}
	if err := waitForPackages(ctx, pc, c, o.Timeout, o.Progress); err != nil {
		return "", err
	}
	// The TKR source installs each compatible release; clusters of them are admitted once Ready.
	o.Progress.Infof("Waiting for Kubernetes releases %s", strings.Join(tkrs, ", "))
	return "v" + version, tkr.WaitReady(ctx, c, tkrs, o.Timeout, tkr.Progress{
		Ready: func(name string) { o.Progress.Infof("Kubernetes release %s is ready", name) }})
}

// waitForPackages waits for tkg-pkg, then for each PackageInstall its App deployed, in parallel.
// A package that fails is waited past until the timeout, as TKG does: packages of one meta
// package may need each other's CRDs, and kapp-controller retries them.
func waitForPackages(ctx context.Context, pc *packaging.Client, c client.Client, timeout time.Duration, out *progress.Printer) error {
	say := out.Infof
	say("waiting for package: %s", MetaPackage)
	if err := pc.WaitReconciled(ctx, MetaPackage, tkg.SystemNamespace, timeout, true); err != nil {
		return err
	}
	say("successfully reconciled package: %s", MetaPackage)
	children, err := childrenOf(ctx, c, MetaPackage)
	if err != nil {
		return err
	}
	for _, child := range children {
		say("waiting for package: %s", child)
	}
	errs := make([]error, len(children))
	var wg sync.WaitGroup
	for i, child := range children {
		wg.Go(func() {
			if errs[i] = pc.WaitReconciled(ctx, child, tkg.SystemNamespace, timeout, true); errs[i] == nil {
				say("successfully reconciled package: %s", child)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// childrenOf lists the PackageInstalls that an installed package's App deployed, by the label
// the App's status names.
func childrenOf(ctx context.Context, c client.Client, installed string) ([]string, error) {
	app := &kappctrlv1alpha1.App{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: tkg.SystemNamespace, Name: installed}, app); err != nil {
		return nil, fmt.Errorf("failed to read the App of %s: %w", installed, err)
	}
	if app.Status.Deploy == nil || app.Status.Deploy.KappDeployStatus == nil {
		return nil, fmt.Errorf("the App of %s reports no deployed resources", installed)
	}
	key, value, ok := strings.Cut(app.Status.Deploy.KappDeployStatus.AssociatedResources.Label, "=")
	if !ok {
		return nil, fmt.Errorf("the App of %s reports no label of its resources", installed)
	}
	list := &pkgingv1alpha1.PackageInstallList{}
	if err := c.List(ctx, list, client.MatchingLabels{key: value}); err != nil {
		return nil, err
	}
	var names []string
	for _, pi := range list.Items {
		if pi.Namespace == tkg.SystemNamespace {
			names = append(names, pi.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}
