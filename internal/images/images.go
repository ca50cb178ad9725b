package images

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// Labels of an image's config.
const (
	// LabelSource, LabelVersion and LabelTitle are the OCI labels naming the module an image's
	// binary is built from, its version, and what the image is.
	LabelSource  = "org.opencontainers.image.source"
	LabelVersion = "org.opencontainers.image.version"
	LabelTitle   = "org.opencontainers.image.title"
	// LabelComponent names the slipway component an image of slipway's runs.
	LabelComponent = "dev.slipway.component"
	// LabelSimulated marks a stand-in for an image that cannot be built on slipway's host;
	// LabelStandsInFor names the image it stands in for.
	LabelSimulated   = "dev.slipway.simulated"
	LabelStandsInFor = "dev.slipway.stands-in-for"
)

// AnnotationRefName is the OCI layout's annotation naming an image by the reference its
// manifests write.
const AnnotationRefName = "org.opencontainers.image.ref.name"

// Environment of slipway's images.
const (
	// EnvComponent makes slipway's binary, started as /manager, run that component with its
	// arguments, as a Deployment's `command: [/manager]` starts it.
	EnvComponent = "SLIPWAY_COMPONENT"
	// EnvStandsInFor tells the stand-in component what it stands in for.
	EnvStandsInFor = "SLIPWAY_STANDS_IN_FOR"
)

// LayoutDir is where `make images` writes its OCI image layout, under the assets directory.
const LayoutDir = "images/layout"

// Built is one image of the layout.
type Built struct {
	// Ref is the reference the manifests write.
	Ref   string
	Image v1.Image
}

// ReadLayout returns the images of the layout in dir, sorted by reference.
func ReadLayout(dir string) ([]Built, error) {
	index, manifest, err := layoutIndex(dir)
	if err != nil {
		return nil, err
	}
	var built []Built
	for _, desc := range manifest.Manifests {
		ref := desc.Annotations[AnnotationRefName]
		if ref == "" {
			continue
		}
		img, err := index.Image(desc.Digest)
		if err != nil {
			return nil, fmt.Errorf("image %s of %s: %w", ref, dir, err)
		}
		built = append(built, Built{Ref: ref, Image: img})
	}
	sort.Slice(built, func(i, j int) bool { return built[i].Ref < built[j].Ref })
	return built, nil
}

// layoutIndex opens the OCI layout in dir and reads its index.
func layoutIndex(dir string) (v1.ImageIndex, *v1.IndexManifest, error) {
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		return nil, nil, fmt.Errorf("no images in %s: run `make images`", dir)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, nil, err
	}
	index, err := p.ImageIndex()
	if err != nil {
		return nil, nil, err
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		return nil, nil, err
	}
	return index, manifest, nil
}

// Digests maps each reference of the layout in dir to its image's digest.
func Digests(dir string) (map[string]string, error) {
	built, err := ReadLayout(dir)
	if err != nil {
		return nil, err
	}
	digests := map[string]string{}
	for _, b := range built {
		d, err := b.Image.Digest()
		if err != nil {
			return nil, err
		}
		digests[b.Ref] = d.String()
	}
	return digests, nil
}
