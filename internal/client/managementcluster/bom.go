package managementcluster

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/tkg"
)

// BOM is a TKG bill of materials in TKG's shape (tkg-bom-vX.Y.Z.yaml): the release, its default
// Kubernetes version, the image repository, and a component per package of the management
// repository, each with its versions and their bundle images.
type BOM struct {
	Release struct {
		Version string `json:"version"`
	} `json:"release"`
	Default struct {
		K8sVersion string `json:"k8sVersion"`
	} `json:"default"`
	ImageConfig struct {
		ImageRepository string `json:"imageRepository"`
	} `json:"imageConfig"`
	// TKRCompatibility is the TKR compatibility metadata image, in the image repository.
	TKRCompatibility struct {
		ImagePath string `json:"imagePath"`
	} `json:"tkr-compatibility"`
	// ManagementPackageRepository is the management package repository's bundle.
	ManagementPackageRepository BOMImage                  `json:"tanzu-framework-management-packages"`
	Components                  map[string][]BOMComponent `json:"components"`
}

// BOMComponent is one version of a component and its images.
type BOMComponent struct {
	Version string              `json:"version"`
	Images  map[string]BOMImage `json:"images"`
}

// BOMImage is an image by its path in the image repository (or a whole reference when it lies
// elsewhere) and its tag or digest.
type BOMImage struct {
	ImagePath string `json:"imagePath"`
	Tag       string `json:"tag,omitempty"`
	Digest    string `json:"digest,omitempty"`
}

// BOM returns the bill of materials of the repository's TKG version: every package the
// repository holds, by refName, with its versions (newest first) and the bundle each is
// fetched from, as the repository's lock has it.
func (r *Repository) BOM(defaultKubernetesVersion string) (*BOM, error) {
	version, err := r.TKGVersion()
	if err != nil {
		return nil, err
	}
	repoRef, err := name.ParseReference(r.Ref)
	if err != nil {
		return nil, fmt.Errorf("invalid management package repository %q: %w", r.Ref, err)
	}
	b := &BOM{Components: map[string][]BOMComponent{}}
	b.Release.Version = version
	b.Default.K8sVersion = defaultKubernetesVersion
	b.ImageConfig.ImageRepository = repoRef.Context().RegistryStr() + "/" + path.Dir(repoRef.Context().RepositoryStr())
	b.TKRCompatibility.ImagePath = "tkr-compatibility"
	b.ManagementPackageRepository = bomImage(b.ImageConfig.ImageRepository, r.Ref)
	for p, data := range r.files {
		if !strings.HasPrefix(p, "packages/") || !strings.HasSuffix(p, ".yml") && !strings.HasSuffix(p, ".yaml") {
			continue
		}
		pkg := &datapkgingv1alpha1.Package{}
		if err := yaml.Unmarshal(data, pkg); err != nil {
			return nil, fmt.Errorf("repository %s, %s: %w", r.Ref, p, err)
		}
		if pkg.Kind != "Package" {
			continue
		}
		c := BOMComponent{Version: "v" + pkg.Spec.Version, Images: map[string]BOMImage{}}
		for _, f := range pkg.Spec.Template.Spec.Fetch {
			if f.ImgpkgBundle != nil {
				c.Images["packageBundle"] = bomImage(b.ImageConfig.ImageRepository, r.bundle(f.ImgpkgBundle.Image))
			}
		}
		b.Components[pkg.Spec.RefName] = append(b.Components[pkg.Spec.RefName], c)
	}
	for _, versions := range b.Components {
		slices.SortFunc(versions, func(a, b BOMComponent) int { return tkg.CompareVersions(b.Version, a.Version) })
	}
	return b, nil
}

// bomImage names ref by its path in repository when it lies there, else whole.
func bomImage(repository, ref string) BOMImage {
	image, digest, hasDigest := strings.Cut(ref, "@")
	img := BOMImage{ImagePath: image}
	if hasDigest {
		img.Digest = digest
	} else if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		img.ImagePath, img.Tag = image[:i], image[i+1:]
	}
	img.ImagePath = strings.TrimPrefix(img.ImagePath, repository+"/")
	return img
}
