package bundle

import (
	"fmt"
	"strings"

	"carvel.dev/imgpkg/pkg/imgpkg/lockconfig"
	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"
)

// ImagesLockPath is where a bundle lists the images its configuration refers to.
const ImagesLockPath = ".imgpkg/images.yml"

// AnnotationKbldID is the reference the configuration wrote, which kbld replaces with the
// locked one.
const AnnotationKbldID = "kbld.carvel.dev/id"

// ParseImagesLock reads an images lock (imgpkg's .imgpkg/images.yml, in imgpkg's library's
// type); ok is false for a document that is not one. Unlike imgpkg's own reader it takes images
// named by tag, as a bundle's source directory names them until PushLocking locks them by digest.
func ParseImagesLock(data []byte) (lock lockconfig.ImagesLock, ok bool) {
	if err := yaml.Unmarshal(data, &lock); err != nil || lock.Kind != lockconfig.ImagesLockKind {
		return lockconfig.ImagesLock{}, false
	}
	return lock, true
}

// lockByDigest has lockImage push every image of lock named by tag to the registry of the bundle
// at bundleRef, and locks it by digest, keeping the image's annotations.
func lockByDigest(data []byte, bundleRef string, lockImage LockImage) ([]byte, error) {
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
		locked, err := lockImage(img.Image, bundle.Context().RegistryStr())
		if err != nil {
			return nil, err
		}
		annotations := map[string]string{AnnotationKbldID: img.Image}
		for k, v := range img.Annotations {
			annotations[k] = v
		}
		lock.Images[i] = lockconfig.ImageRef{Image: locked, Annotations: annotations}
	}
	return yaml.Marshal(lock)
}

// NameOptions lets a registry on this host (localhost, 127.*) be reached over plain HTTP, as the
// local registry serves.
func NameOptions(ref string) []name.Option {
	if OnThisHost(ref) {
		return []name.Option{name.Insecure}
	}
	return nil
}

// OnThisHost says whether a reference names a registry on this host (localhost, 127.*).
func OnThisHost(ref string) bool {
	host := strings.SplitN(ref, "/", 2)[0]
	return strings.HasPrefix(host, "localhost") || strings.HasPrefix(host, "127.")
}
