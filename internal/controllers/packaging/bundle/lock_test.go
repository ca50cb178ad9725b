package bundle_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/internal/controllers/packaging/bundle"
	"github.com/slipway-dev/slipway/internal/controllers/packaging/fetch"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
	"github.com/slipway-dev/slipway/internal/test/testregistry"
)

// TestPushWithPlaceholdersLocksEveryImageByDigest pushes a bundle whose lock names images by
// tag: each gets a placeholder beside the bundle, labelled, and the pushed lock names it by
// digest with its annotations kept; the source directory is untouched.
func TestPushWithPlaceholdersLocksEveryImageByDigest(t *testing.T) {
	host := testregistry.Start(t)
	lock := "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\nimages:\n" +
		"- image: projects.registry.vmware.com/tkg/antrea-advanced-debian:v1.13.1_vmware.1\n  annotations:\n    kbld.carvel.dev/id: antrea-advanced-debian\n" +
		"- image: " + host + "/already/locked@sha256:" + strings.Repeat("a", 64) + "\n"
	dir := testfiles.WriteTree(t, map[string]string{".imgpkg/images.yml": lock, "config/antrea.yml": "image: antrea-advanced-debian\n"})
	ref, err := bundle.PushWithPlaceholders(dir, host+"/packages/antrea:1.13.1", func(image string) map[string]string {
		return map[string]string{"local.slipway.dev/simulated": "true"}
	})
	if err != nil {
		t.Fatal(err)
	}
	files, err := fetch.ImageFiles(t.Context(), ref, authn.Anonymous)
	if err != nil {
		t.Fatal(err)
	}
	pushed, ok := bundle.ParseImagesLock(files[bundle.ImagesLockPath])
	if !ok || len(pushed.Images) != 2 {
		t.Fatalf("pushed lock:\n%s", files[bundle.ImagesLockPath])
	}
	first := pushed.Images[0]
	if !strings.HasPrefix(first.Image, host+"/tkg/antrea-advanced-debian@sha256:") ||
		first.Annotations["kbld.carvel.dev/id"] != "antrea-advanced-debian" ||
		first.Annotations[bundle.AnnotationPlaceholderFor] != "projects.registry.vmware.com/tkg/antrea-advanced-debian:v1.13.1_vmware.1" {
		t.Errorf("placeholder lock entry %+v", first)
	}
	if pushed.Images[1].Image != host+"/already/locked@sha256:"+strings.Repeat("a", 64) {
		t.Errorf("a digest was relocked: %+v", pushed.Images[1])
	}
	digest, err := name.NewDigest(first.Image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(digest)
	if err != nil {
		t.Fatalf("the placeholder is not in the registry: %v", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.Labels["local.slipway.dev/simulated"] != "true" || cfg.Config.Labels[bundle.LabelPlaceholderFor] == "" {
		t.Errorf("placeholder labels %v", cfg.Config.Labels)
	}
	// The tag beside the bundle names the same image.
	tag, _ := name.NewTag(host+"/tkg/antrea-advanced-debian:v1.13.1_vmware.1", name.Insecure)
	if d, err := remote.Head(tag); err != nil || host+"/tkg/antrea-advanced-debian@"+d.Digest.String() != first.Image {
		t.Errorf("tag %s: %v %v", tag, d, err)
	}
	if src, err := os.ReadFile(filepath.Join(dir, ".imgpkg", "images.yml")); err != nil || string(src) != lock {
		t.Errorf("the source lock was changed:\n%s", src)
	}
}
