package images

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
)

// Target is where an image named ref is pushed in registry (host:port, or host:port/path):
// registry/<ref's repository path>:<ref's tag>, so that
// projects.registry.vmware.com/tkg/metrics-server:v0.7.2_vmware.1 goes to
// registry/tkg/metrics-server:v0.7.2_vmware.1.
func Target(registry, ref string) (name.Tag, error) {
	orig, err := name.NewTag(ref)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image %q is not named by a tag: %w", ref, err)
	}
	target := registry + "/" + orig.RepositoryStr() + ":" + orig.TagStr()
	return name.NewTag(target, bundle.NameOptions(target)...)
}

// Push pushes an image of the layout to its target in registry, unless the registry holds that
// digest there already, and returns the target by digest (REPOSITORY@sha256:…).
func Push(ctx context.Context, registry string, b Built) (name.Digest, bool, error) {
	target, err := Target(registry, b.Ref)
	if err != nil {
		return name.Digest{}, false, err
	}
	digest, err := b.Image.Digest()
	if err != nil {
		return name.Digest{}, false, err
	}
	locked := target.Context().Digest(digest.String())
	if desc, err := remote.Head(target, remote.WithContext(ctx)); err == nil && desc.Digest == digest {
		return locked, false, nil
	}
	if err := remote.Write(target, b.Image, remote.WithContext(ctx)); err != nil {
		return name.Digest{}, false, fmt.Errorf("failed to push %s to %s: %w", b.Ref, target, err)
	}
	return locked, true, nil
}
