package managementcluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blang/semver/v4"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/carvel/deploy"
	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/carvel/template"
	slipwayclient "github.com/slipway-dev/slipway/internal/client"
	"github.com/slipway-dev/slipway/internal/client/clusterctl"
	"github.com/slipway-dev/slipway/internal/client/packaging"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/source"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/registrytrust"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Names TKG gives what it installs.
const (
	// ManagementRepository is the management package repository's name.
	ManagementRepository = "tanzu-management"
	// MetaPackage and MetaPackageRefName are tkg-pkg's PackageInstall and Package.
	MetaPackage        = "tkg-pkg"
	MetaPackageRefName = "tkg.tanzu.vmware.com"
	// KappControllerRefName is the package kapp-controller is rendered from.
	KappControllerRefName = "kapp-controller.tanzu.vmware.com"
	kappController        = "kapp-controller"
	// valuesFile is where kapp-controller's values are written beside its fetched bundle.
	valuesFile = "slipway-values.yml"
)

// DefaultPackageRepository is where `make packages` pushes the management package repository.
const DefaultPackageRepository = "127.0.0.1:5000/packages/slipway-repo:v0.1.0"

// PackageRepositoryOf is the management package repository a run reads: the one asked for, or,
// with TKG's TKG_CUSTOM_IMAGE_REPOSITORY (a registry path holding a copy of every image, as
// `imgpkg copy` makes one), the default's name and tag there, or the default. The TKR catalogue
// is read from beside it, so from the custom image repository too.
func PackageRepositoryOf(asked, customImageRepository string) (string, error) {
	if asked != "" || customImageRepository == "" {
		return cmp.Or(asked, DefaultPackageRepository), nil
	}
	custom := strings.TrimSuffix(customImageRepository, "/")
	if _, err := name.NewRepository(custom); err != nil || strings.Contains(custom, "://") {
		return "", fmt.Errorf("invalid TKG_CUSTOM_IMAGE_REPOSITORY %q: write a registry path such as registry.example.com/tkg, without a scheme or tag", customImageRepository)
	}
	return custom + "/" + path.Base(DefaultPackageRepository), nil
}

// Options are what Run takes.
type Options struct {
	// Kubeconfig and Context reach the cluster.
	Kubeconfig, Context string
	// WorkDir receives clusterctl's configuration.
	WorkDir string
	// Repository is the management package repository, as ReadRepository read it.
	Repository *Repository
	// InfrastructureProvider selects the Cluster API infrastructure provider clusterctl installs
	// and the ClusterClass package tkg-pkg installs: "local" (the default) or "vsphere".
	InfrastructureProvider string
	// ProviderVariables are the values of the providers' variables: CAPV's VSPHERE_USERNAME and
	// VSPHERE_PASSWORD.
	ProviderVariables map[string]string
	// Timeout bounds each wait: kapp-controller, each provider, each package.
	Timeout time.Duration
	// Progress prints TKG's progress lines.
	Progress *progress.Printer
	// Management says the cluster is the management cluster being made, not a bootstrap
	// cluster: only TKG's lines differ.
	Management bool
}

// target names the cluster in TKG's progress lines.
func (o Options) target() string {
	if o.Management {
		return "management cluster"
	}
	return "bootstrap cluster"
}

// Run installs the whole payload: kapp-controller, the providers, the management packages. It
// returns the TKG version of the tkg-pkg it installed.
func Run(ctx context.Context, o Options) (string, error) {
	c, err := slipwayclient.New(o.Kubeconfig, o.Context)
	if err != nil {
		return "", err
	}
	o.Progress.Infof("Installing kapp-controller on %s...", o.target())
	if err := InstallKappController(ctx, c, o.Repository, o.Timeout, o.Progress); err != nil {
		return "", err
	}
	target := "bootstrapper"
	if o.Management {
		target = o.target()
	}
	if err := clusterctl.Init(ctx, clusterctl.InitOptions{
		Kubeconfig: o.Kubeconfig, Context: o.Context, Client: c, WorkDir: o.WorkDir, Timeout: o.Timeout,
		Progress: o.Progress, Target: target, Infrastructure: o.InfrastructureProvider, Variables: o.ProviderVariables,
		// The provider images run from beside the repository, as `make packages` locks them.
		Images: o.Repository.locked,
	}); err != nil {
		return "", err
	}
	return InstallManagementPackages(ctx, c, o)
}

// InstallKappController renders the newest kapp-controller package of the repository with its
// default values and deploys it, waiting for its Deployment, as the tanzu CLI installs
// kapp-controller from its package before anything else.
func InstallKappController(ctx context.Context, c client.Client, repo *Repository, timeout time.Duration, out *progress.Printer) error {
	pkg, err := newestPackage(repo.files, repo.Ref, KappControllerRefName)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "slipway-kapp-controller-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	spec := pkg.Spec.Template.Spec
	if spec == nil {
		return fmt.Errorf("package %s has no spec.template.spec", pkg.Name)
	}
	fetches := slices.Clone(spec.Fetch)
	for i, step := range fetches {
		if step.ImgpkgBundle != nil {
			b := *step.ImgpkgBundle
			b.Image = repo.bundle(b.Image)
			fetches[i].ImgpkgBundle = &b
		}
	}
	if err := fetch.Fetch(ctx, nil, "", fetches, dir, repo.registry.Transport); err != nil {
		return fmt.Errorf("package %s: %w", pkg.Name, err)
	}
	// TKG's management kapp-controller takes tkg-system as its packaging global namespace: the
	// Packages of the TKRs there serve the clusters of every namespace. It trusts the registry
	// as the configuration says (kapp-controller-config).
	values, err := yaml.Marshal(map[string]any{"kappController": map[string]any{
		"globalNamespace": tkg.SystemNamespace,
		"config":          map[string]string{"caCerts": repo.trust.CACerts, "dangerousSkipTLSVerify": strings.Join(repo.trust.SkipVerify, ",")},
	}})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, valuesFile), values, 0o600); err != nil {
		return err
	}
	steps := slices.Clone(spec.Template)
	if len(steps) == 0 || steps[0].Ytt == nil {
		return fmt.Errorf("package %s does not template with ytt first: its values cannot be given", pkg.Name)
	}
	first := *steps[0].Ytt
	first.ValuesFrom = append(slices.Clone(first.ValuesFrom), kappctrlv1alpha1.AppTemplateValuesSource{Path: valuesFile})
	steps[0].Ytt = &first
	manifests, err := template.Template(ctx, nil, "", steps, dir)
	if err != nil {
		return fmt.Errorf("package %s: %w", pkg.Name, err)
	}
	objs, err := deploy.Parse(manifests)
	if err != nil {
		return fmt.Errorf("package %s: %w", pkg.Name, err)
	}
	// The kapp record lives in the namespace, so it comes first.
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tkg.SystemNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create namespace %s: %w", tkg.SystemNamespace, err)
	}
	out.Infof("waiting for resource %s of type *v1.Deployment to be up and running", kappController)
	start := time.Now()
	if _, err := deploy.Apply(ctx, deploy.Target{Client: c, Namespace: tkg.SystemNamespace}, deploy.AppName(kappController), objs, timeout); err != nil {
		return fmt.Errorf("failed to install kapp-controller %s: %w", pkg.Spec.Version, err)
	}
	out.Infof("kapp-controller %s is running after %s", pkg.Spec.Version, time.Since(start).Round(time.Millisecond))
	return nil
}

// Repository is what the payload reads from the management package repository and from beside
// it, read once, before anything is created.
type Repository struct {
	// Ref is the repository's imgpkg bundle. The TKR catalogue (tkr-repository,
	// tkr-compatibility) is in the same registry path, as `make packages` pushes them.
	Ref string
	// files are the bundle's files; compatibility is the TKR compatibility metadata document.
	files         map[string][]byte
	compatibility []byte
	// locked are the package bundles' references as the Packages write them and the provider
	// images by tag, each with where the repository's lock has it: beside the repository when it
	// was copied with imgpkg.
	locked map[string]string
	// trust is how the repository's registry is trusted, and registry reaches it so: the payload
	// gives the same trust to kapp-controller and the TKR source.
	trust    registrytrust.Trust
	registry fetch.Registry
}

// Releases returns the versions of every release the compatibility metadata lists, sorted.
func (r *Repository) Releases() []string {
	metadata := &source.CompatibilityMetadata{}
	if err := yaml.Unmarshal(r.compatibility, metadata); err != nil {
		return nil
	}
	var out []string
	for _, mv := range metadata.ManagementClusterVersions {
		for _, v := range mv.SupportedKubernetesVersions {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	slices.Sort(out)
	return out
}

// ReadRepository reads the management package repository and the compatibility metadata beside
// it, trusting its registry as trust says (TKG_CUSTOM_IMAGE_REPOSITORY_CA_CERTIFICATE and
// _SKIP_TLS_VERIFY), and checks that it holds the packages the payload installs from it.
func ReadRepository(ctx context.Context, ref string, trust registrytrust.Trust) (*Repository, error) {
	transport, err := trust.Transport()
	if err != nil {
		return nil, fmt.Errorf("the trust of the management package repository's registry: %w", err)
	}
	reg := fetch.Registry{Auth: authn.Anonymous, Transport: transport}
	files, err := fetch.ImageFiles(ctx, ref, reg)
	if registrytrust.Untrusted(err) {
		return nil, fmt.Errorf("the management package repository %s: %w: trust its registry: give its CA in TKG_CUSTOM_IMAGE_REPOSITORY_CA_CERTIFICATE "+
			"(base64 of the PEM), or, for the registry of TKG_CUSTOM_IMAGE_REPOSITORY, set TKG_CUSTOM_IMAGE_REPOSITORY_SKIP_TLS_VERIFY: true "+
			"(a management cluster's upgrade reads them from Secret tkg-system/kapp-controller-config, keys caCerts and dangerousSkipTLSVerify)", ref, err)
	}
	if err != nil {
		return nil, fmt.Errorf("the management package repository %s: %w (`make packages` pushes it to the local registry)", ref, err)
	}
	for _, refName := range []string{KappControllerRefName, MetaPackageRefName} {
		if _, err := newestPackage(files, ref, refName); err != nil {
			return nil, err
		}
	}
	compatibilityImage, err := ImageBeside(ref, "tkr-compatibility")
	if err != nil {
		return nil, err
	}
	compatibility, err := source.ReadCompatibility(ctx, compatibilityImage, reg)
	if err != nil {
		return nil, fmt.Errorf("the TKR compatibility metadata beside the management repository: %w (`make packages` pushes it)", err)
	}
	locked, err := fetch.LockedImages(ctx, ref, files, reg)
	if err != nil {
		return nil, fmt.Errorf("the management package repository %s: %w", ref, err)
	}
	return &Repository{Ref: ref, files: files, compatibility: compatibility, locked: locked, trust: trust, registry: reg}, nil
}

// TKGVersion is the TKG version the repository makes: its newest tkg-pkg's, with a v.
func (r *Repository) TKGVersion() (string, error) {
	pkg, err := newestPackage(r.files, r.Ref, MetaPackageRefName)
	if err != nil {
		return "", err
	}
	return "v" + pkg.Spec.Version, nil
}

// bundle is where the repository holds a package bundle its Packages name.
func (r *Repository) bundle(ref string) string { return cmp.Or(r.locked[ref], ref) }

// newestPackage returns the newest Package of a refName in the repository bundle's files.
func newestPackage(files map[string][]byte, repository, refName string) (*datapkgingv1alpha1.Package, error) {
	var newest *datapkgingv1alpha1.Package
	var newestVersion semver.Version
	for p, data := range files {
		if !strings.HasPrefix(p, "packages/"+refName+"/") || !strings.HasSuffix(p, ".yml") && !strings.HasSuffix(p, ".yaml") {
			continue
		}
		pkg := &datapkgingv1alpha1.Package{}
		if err := yaml.Unmarshal(data, pkg); err != nil {
			return nil, fmt.Errorf("repository %s, %s: %w", repository, p, err)
		}
		if pkg.Kind != "Package" || pkg.Spec.RefName != refName {
			continue
		}
		v, err := semver.ParseTolerant(pkg.Spec.Version)
		if err != nil {
			return nil, fmt.Errorf("repository %s, %s: version %q: %w", repository, p, pkg.Spec.Version, err)
		}
		if newest == nil || v.GT(newestVersion) {
			newest, newestVersion = pkg, v
		}
	}
	if newest == nil {
		return nil, fmt.Errorf("the management package repository %s has no package %s", repository, refName)
	}
	return newest, nil
}

// ImageBeside returns the image named image in the same registry path as ref: for
// 127.0.0.1:5000/packages/slipway-repo:v0.1.0 and tkr-repository,
// 127.0.0.1:5000/packages/tkr-repository.
func ImageBeside(ref, image string) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	return r.Context().RegistryStr() + "/" + path.Join(path.Dir(r.Context().RepositoryStr()), image), nil
}

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
	pc := &packaging.Client{C: c, Progress: o.Progress}
	if err := pc.RepositoryAdd(ctx, packaging.RepositoryOptions{Name: ManagementRepository, Namespace: tkg.SystemNamespace, URL: o.Repository.Ref,
		CreateNamespace: true, Wait: true, WaitTimeout: o.Timeout}); err != nil {
		return "", err
	}
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
	return "v" + version, waitForReleases(ctx, c, tkrs, o.Timeout, o.Progress)
}

// waitForReleases waits until the TKR source has installed each compatible release and it is
// Ready, so that clusters of them are admitted once the payload is in.
func waitForReleases(ctx context.Context, c client.Client, versions []string, timeout time.Duration, out *progress.Printer) error {
	out.Infof("Waiting for Kubernetes releases %s", strings.Join(versions, ", "))
	ready := map[string]bool{}
	var missing []string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		list := &runv1alpha3.TanzuKubernetesReleaseList{}
		if err := c.List(ctx, list); err != nil {
			return false, err
		}
		for _, tkr := range list.Items {
			if !ready[tkr.Spec.Version] && slices.Contains(versions, tkr.Spec.Version) && tkr.Status.Conditions.IsTrue(runv1alpha3.ConditionReady) {
				ready[tkr.Spec.Version] = true
				out.Infof("Kubernetes release %s is ready", tkr.Name)
			}
		}
		missing = slices.DeleteFunc(slices.Clone(versions), func(v string) bool { return ready[v] })
		return len(missing) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("the Kubernetes releases %s are not ready after %s (`slipway kubernetes-release get` shows their conditions): %w", strings.Join(missing, ", "), timeout, err)
	}
	return nil
}

// waitForPackages waits for tkg-pkg, then for each PackageInstall its App deployed, in parallel.
// A package that fails is waited past until the timeout, as TKG does: packages of one meta
// package may need each other's CRDs, and the package controller retries them.
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
