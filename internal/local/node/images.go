package node

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/images"
)

// imageStore reads what an image's config says it runs, as a runtime reads the config of an image
// it pulled: from the images `make images` built, which every node has preloaded as kind's nodes
// have the images `kind load` gave them (found by digest, or by the reference the manifests
// write), else from the image's registry when it is on this host (a node has no route off it),
// once per digest.
type imageStore struct {
	// layout is the OCI layout of the preloaded images.
	layout string

	mu     sync.Mutex
	loaded bool
	// byRef and byDigest hold the preloaded images' labels.
	byRef, byDigest map[string]map[string]string
	// pulled holds the labels of images read from registries, by reference.
	pulled map[string]map[string]string
}

// newImageStore returns the store of the images built into the assets directory.
func newImageStore() *imageStore {
	s := &imageStore{}
	if set, err := assets.Find(); err == nil {
		s.layout = filepath.Join(set.Dir, images.LayoutDir)
	}
	return s
}

// labels returns an image's config labels; ok is false for an image neither preloaded nor
// reachable now (asked again for the next pod).
func (s *imageStore) labels(image string) (map[string]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded {
		s.load()
	}
	if _, digest, ok := strings.Cut(image, "@"); ok {
		if l, ok := s.byDigest[digest]; ok {
			return l, true
		}
	} else if l, ok := s.byRef[image]; ok {
		return l, true
	}
	if l, ok := s.pulled[image]; ok {
		return l, true
	}
	l, ok := pullLabels(image)
	if ok && strings.Contains(image, "@sha256:") {
		// A tag may move; a digest names the same config for good.
		if s.pulled == nil {
			s.pulled = map[string]map[string]string{}
		}
		s.pulled[image] = l
	}
	return l, ok
}

// load reads the preloaded images' labels once; without a layout every image is pulled.
func (s *imageStore) load() {
	s.loaded = true
	s.byRef, s.byDigest = map[string]map[string]string{}, map[string]map[string]string{}
	if s.layout == "" {
		return
	}
	built, err := images.ReadLayout(s.layout)
	if err != nil {
		return
	}
	for _, b := range built {
		digest, err := b.Image.Digest()
		if err != nil {
			continue
		}
		cfg, err := b.Image.ConfigFile()
		if err != nil {
			continue
		}
		s.byRef[b.Ref] = cfg.Config.Labels
		s.byDigest[digest.String()] = cfg.Config.Labels
	}
}

// pullLabels reads an image's config from its registry, if that is on this host.
func pullLabels(image string) (map[string]string, bool) {
	if !bundle.OnThisHost(image) {
		return nil, false
	}
	ref, err := name.ParseReference(image, bundle.NameOptions(image)...)
	if err != nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	img, err := remote.Image(ref, remote.WithContext(ctx))
	if err != nil {
		return nil, false
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, false
	}
	return cfg.Config.Labels, true
}

// componentFor is the slipway component that runs a container's image, as its config labels
// it; an image labelled simulated, unknown or unreachable is simulated.
func (a *Agent) componentFor(image string) (string, bool) {
	labels, ok := a.images.labels(image)
	if !ok || labels[images.LabelSimulated] == "true" {
		return "", false
	}
	c := labels[images.LabelComponent]
	return c, c != ""
}
