package fetch_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carvel.dev/imgpkg/pkg/imgpkg/lockconfig"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/images"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
	"github.com/slipway-dev/slipway/internal/test/testregistry"
)

// TestFetchFollowsARelocatedBundle fetches a bundle at its origin, where its lock stays as
// pushed, and a copy of it in another repository: the lock names the copy of its image once that
// is there too (what imgpkg copy makes), as imgpkg pull rewrites it.
func TestFetchFollowsARelocatedBundle(t *testing.T) {
	host := testregistry.Start(t)
	src := testfiles.WriteTree(t, map[string]string{
		".imgpkg/images.yml": "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\nimages:\n" +
			"- image: projects.registry.vmware.com/tkg/metrics-server:v0.7.2_vmware.1\n  annotations:\n    kbld.carvel.dev/id: metrics-server\n",
		"config/deployment.yml": "image: metrics-server\n",
	})
	// The lock's image is pushed beside the bundle, as `make packages` pushes what `make images`
	// built.
	origin, err := bundle.PushLocking(src, host+"/packages/metrics-server:0.7.2", func(ref, registry string) (string, error) {
		img, err := random.Image(256, 1)
		if err != nil {
			return "", err
		}
		target, err := images.Target(registry, ref)
		if err != nil {
			return "", err
		}
		digest, err := img.Digest()
		if err != nil {
			return "", err
		}
		return target.Context().Digest(digest.String()).String(), remote.Write(target, img)
	})
	if err != nil {
		t.Fatal(err)
	}
	lockAt := func(ref string) lockconfig.ImagesLock {
		t.Helper()
		dir := t.TempDir()
		steps := []kappctrlv1alpha1.AppFetch{{ImgpkgBundle: &kappctrlv1alpha1.AppFetchImgpkgBundle{Image: ref}}}
		if err := fetch.Fetch(t.Context(), nil, "default", steps, dir, nil); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, ".imgpkg", "images.yml"))
		if err != nil {
			t.Fatal(err)
		}
		lock, ok := bundle.ParseImagesLock(data)
		if !ok || len(lock.Images) != 1 {
			t.Fatalf("lock of %s:\n%s", ref, data)
		}
		return lock
	}
	placeholder := lockAt(origin).Images[0]
	if !strings.HasPrefix(placeholder.Image, host+"/tkg/metrics-server@sha256:") {
		t.Fatalf("the origin's lock was rewritten: %+v", placeholder)
	}

	// Copy the bundle and its image into one repository by digest, as imgpkg copy does.
	copyTo := func(from, repo string) string {
		t.Helper()
		ref, err := name.ParseReference(from, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		img, err := remote.Image(ref)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		to, err := name.NewDigest(repo+"@"+d.String(), name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(to, img); err != nil {
			t.Fatal(err)
		}
		return to.String()
	}
	relocated := host + "/relocated/repo"
	copied := copyTo(origin, relocated)
	// With the bundle copied and its image not yet, the lock names the origin.
	if got := lockAt(copied).Images[0]; got.Image != placeholder.Image {
		t.Fatalf("a bundle whose image was not copied: lock %+v", got)
	}
	image := copyTo(placeholder.Image, relocated)
	if got := lockAt(copied).Images[0]; got.Image != image || got.Annotations["kbld.carvel.dev/id"] != "metrics-server" {
		t.Fatalf("the copy's lock does not name the copy %s: %+v", image, got)
	}
}
