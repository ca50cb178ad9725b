package bundle_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
	"github.com/slipway-dev/slipway/internal/test/testregistry"
)

// TestPushLockingLocksEveryImageByDigest pushes a bundle whose lock names images by tag: each is
// handed to the lock function with the bundle's registry, the pushed lock names what it returned
// with the image's annotations kept, a digest already locked is left, and the source directory is
// untouched.
func TestPushLockingLocksEveryImageByDigest(t *testing.T) {
	host := testregistry.Start(t)
	lock := "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\nimages:\n" +
		"- image: projects.registry.vmware.com/tkg/antrea-advanced-debian:v1.13.1_vmware.1\n  annotations:\n    kbld.carvel.dev/id: antrea-advanced-debian\n" +
		"- image: " + host + "/already/locked@sha256:" + strings.Repeat("a", 64) + "\n"
	dir := testfiles.WriteTree(t, map[string]string{".imgpkg/images.yml": lock, "config/antrea.yml": "image: antrea-advanced-debian\n"})
	built := host + "/tkg/antrea-advanced-debian@sha256:" + strings.Repeat("b", 64)
	var asked []string
	ref, err := bundle.PushLocking(dir, host+"/packages/antrea:1.13.1", func(image, registry string) (string, error) {
		asked = append(asked, image+" in "+registry)
		return built, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"projects.registry.vmware.com/tkg/antrea-advanced-debian:v1.13.1_vmware.1 in " + host}; !slices.Equal(asked, want) {
		t.Errorf("images locked: %v, want %v", asked, want)
	}
	files, err := fetch.ImageFiles(t.Context(), ref, fetch.Anonymous)
	if err != nil {
		t.Fatal(err)
	}
	pushed, ok := bundle.ParseImagesLock(files[bundle.ImagesLockPath])
	if !ok || len(pushed.Images) != 2 {
		t.Fatalf("pushed lock:\n%s", files[bundle.ImagesLockPath])
	}
	if first := pushed.Images[0]; first.Image != built || first.Annotations["kbld.carvel.dev/id"] != "antrea-advanced-debian" {
		t.Errorf("locked entry %+v", first)
	}
	if pushed.Images[1].Image != host+"/already/locked@sha256:"+strings.Repeat("a", 64) {
		t.Errorf("a digest was relocked: %+v", pushed.Images[1])
	}
	if src, err := os.ReadFile(filepath.Join(dir, ".imgpkg", "images.yml")); err != nil || string(src) != lock {
		t.Errorf("the source lock was changed:\n%s", src)
	}
	// An image the lock function cannot provide fails the push with its error.
	if _, err := bundle.PushLocking(dir, host+"/packages/antrea:1.13.1", func(image, _ string) (string, error) {
		return "", fmt.Errorf("image %s is not built", image)
	}); err == nil || !strings.Contains(err.Error(), "antrea-advanced-debian:v1.13.1_vmware.1 is not built") {
		t.Errorf("push of an unbuilt image: %v", err)
	}
}
