package images_test

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/slipway-dev/slipway/internal/images"
)

// TestStandInDigests reads the stand-ins' digests from a layout as `make images` writes it, and
// tells by them a stand-in copied into one repository, whose path imgpkg drops.
func TestStandInDigests(t *testing.T) {
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	digestOf := func(ref string) v1.Hash {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{images.AnnotationRefName: ref})); err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	standIn := digestOf(images.StandIns[0].Ref)
	built := digestOf("projects.registry.vmware.com/tkg/metrics-server:v0.7.2_vmware.1")

	digests, err := images.StandInDigests(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(digests) != 1 || !digests[standIn.String()] {
		t.Fatalf("stand-in digests %v, want only %s", digests, standIn)
	}
	copied := "127.0.0.1:5001/tkg/slipway-repo@"
	if !images.IsStandIn(copied+standIn.String(), digests) {
		t.Errorf("the stand-in copied into one repository is not told")
	}
	if images.IsStandIn(copied+built.String(), digests) || images.IsStandIn(copied+standIn.String(), nil) {
		t.Errorf("a built image, or a copied stand-in without the layout's digests, is told a stand-in")
	}
	if _, err := images.StandInDigests(t.TempDir()); err == nil {
		t.Error("a directory without a layout gives no error")
	}
}
