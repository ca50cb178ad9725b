package node

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/internal/controllers/packaging/bundle"
)

// placeholders finds what a placeholder image stands in for. A relocated bundle's images are
// named by the repository they were copied to (REPO@sha256:…), which says nothing of the
// workload; the placeholder's config does, so the agent reads it, once per digest, as a runtime
// pulls an image.
type placeholders struct {
	mu   sync.Mutex
	seen map[string]string
}

// original returns the reference a placeholder image stands in for, or "" for an image that is
// not named by digest, not reachable, or not a placeholder.
func (p *placeholders) original(image string) string {
	if !strings.Contains(image, "@sha256:") {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if orig, ok := p.seen[image]; ok {
		return orig
	}
	ref, err := name.NewDigest(image, bundle.NameOptions(image)...)
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	img, err := remote.Image(ref, remote.WithContext(ctx))
	if err != nil {
		// Unreachable now: asked again for the next pod.
		return ""
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return ""
	}
	orig := cfg.Config.Labels[bundle.LabelPlaceholderFor]
	if p.seen == nil {
		p.seen = map[string]string{}
	}
	p.seen[image] = orig
	return orig
}

// componentFor is the component that runs a container's image: by the image's name, or by what
// its placeholder stands in for.
func (a *Agent) componentFor(image string) (string, bool) {
	if name, ok := a.components.ComponentFor(image); ok {
		return name, ok
	}
	if orig := a.placeholders.original(image); orig != "" {
		return a.components.ComponentFor(orig)
	}
	return "", false
}
