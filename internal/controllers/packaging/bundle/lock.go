package bundle

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"sigs.k8s.io/yaml"
)

// ImagesLockPath is where a bundle lists the images its configuration refers to.
const ImagesLockPath = ".imgpkg/images.yml"

// Annotations of a locked image.
const (
	// AnnotationKbldID is the reference the configuration wrote, which kbld replaces with the
	// locked one.
	AnnotationKbldID = "kbld.carvel.dev/id"
	// AnnotationPlaceholderFor marks a locked image as slipway's placeholder for the reference
	// it names.
	AnnotationPlaceholderFor = "slipway.dev/placeholder-for"
)

// LabelPlaceholderFor is the label of a placeholder image's config naming the image it stands in
// for.
const LabelPlaceholderFor = "dev.slipway.placeholder-for"

// ImagesLock is imgpkg's .imgpkg/images.yml.
type ImagesLock struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Images     []LockedImage `json:"images"`
}

// LockedImage is one image of a lock: by digest, with the reference the configuration wrote in
// the kbld.carvel.dev/id annotation.
type LockedImage struct {
	Image       string            `json:"image"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ParseImagesLock reads an images lock; ok is false for a document that is not one.
func ParseImagesLock(data []byte) (lock ImagesLock, ok bool) {
	if err := yaml.Unmarshal(data, &lock); err != nil || lock.Kind != "ImagesLock" {
		return ImagesLock{}, false
	}
	return lock, true
}

// Placeholder builds the image that stands in for ref in a registry: one small layer saying so,
// and the labels given (what the local runtime does in its place) with the reference it stands
// in for. The same reference and labels always give the same digest.
func Placeholder(ref string, labels map[string]string) (v1.Image, error) {
	text := fmt.Sprintf("This image stands in for %s in a slipway package repository.\n"+
		"slipway's local runtime does not run container images: it runs the workload as a process\n"+
		"or simulates it, as this image's labels say. The placeholder exists so that the bundles\n"+
		"that name it can be copied and relocated as imgpkg copies any bundle.\n", ref)
	all := map[string]string{LabelPlaceholderFor: ref}
	for k, v := range labels {
		all[k] = v
	}
	return image(map[string][]byte{"SLIPWAY-PLACEHOLDER.txt": []byte(text)}, all)
}

// lockWithPlaceholders pushes a placeholder for every image of lock named by tag, beside the
// bundle at bundleRef (REGISTRY/<the image's repository path>:<tag>), and locks it by digest,
// keeping the image's annotations and naming the reference it stands in for.
func lockWithPlaceholders(data []byte, bundleRef string, labels func(image string) map[string]string) ([]byte, error) {
	lock, ok := ParseImagesLock(data)
	if !ok {
		return nil, fmt.Errorf("%s is not an ImagesLock", ImagesLockPath)
	}
	bundle, err := name.ParseReference(bundleRef, NameOptions(bundleRef)...)
	if err != nil {
		return nil, fmt.Errorf("invalid reference %q: %w", bundleRef, err)
	}
	for i, img := range lock.Images {
		if strings.Contains(img.Image, "@sha256:") {
			continue
		}
		orig, err := name.NewTag(img.Image)
		if err != nil {
			return nil, fmt.Errorf("%s: image %q is neither a digest nor a tag: %w", ImagesLockPath, img.Image, err)
		}
		target, err := name.NewTag(bundle.Context().RegistryStr()+"/"+orig.RepositoryStr()+":"+orig.TagStr(), NameOptions(bundleRef)...)
		if err != nil {
			return nil, err
		}
		placeholder, err := Placeholder(img.Image, labels(img.Image))
		if err != nil {
			return nil, err
		}
		if err := remote.Write(target, placeholder); err != nil {
			return nil, fmt.Errorf("failed to push the placeholder for %s to %s: %w", img.Image, target, err)
		}
		digest, err := placeholder.Digest()
		if err != nil {
			return nil, err
		}
		annotations := map[string]string{AnnotationPlaceholderFor: img.Image}
		for k, v := range img.Annotations {
			annotations[k] = v
		}
		lock.Images[i] = LockedImage{Image: target.Context().Digest(digest.String()).String(), Annotations: annotations}
	}
	return yaml.Marshal(lock)
}

// NameOptions lets a registry on this host (localhost, 127.*) be reached over plain HTTP, as the
// local registry serves.
func NameOptions(ref string) []name.Option {
	if host := strings.SplitN(ref, "/", 2)[0]; strings.HasPrefix(host, "localhost") || strings.HasPrefix(host, "127.") {
		return []name.Option{name.Insecure}
	}
	return nil
}
