package managementcluster

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/source"
	"github.com/slipway-dev/slipway/internal/registrytrust"
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
