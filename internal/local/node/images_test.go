package node

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/internal/images"
	"github.com/slipway-dev/slipway/internal/test/testregistry"
)

// labelled is a small image whose config carries labels.
func labelled(t *testing.T, labels map[string]string) v1.Image {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.Config.Labels = labels
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestComponentForReadsTheImageConfig gives the agent pod images it knows only by their config:
// a preloaded image by the reference its manifests write and, relocated, by its digest alone; an
// image in a registry by its digest; a simulated stand-in; and images it cannot read.
func TestComponentForReadsTheImageConfig(t *testing.T) {
	host := testregistry.Start(t)
	kapp := labelled(t, map[string]string{images.LabelComponent: "kapp-controller"})
	standIn := labelled(t, map[string]string{images.LabelComponent: "stand-in", images.LabelSimulated: "true"})
	dir := filepath.Join(t.TempDir(), "layout")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	const kappRef = "projects.registry.vmware.com/tkg/kapp-controller:v0.50.1_vmware.1"
	const antreaRef = "projects.registry.vmware.com/tkg/antrea-advanced-debian:v1.13.1_vmware.1"
	for ref, img := range map[string]v1.Image{kappRef: kapp, antreaRef: standIn} {
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{images.AnnotationRefName: ref})); err != nil {
			t.Fatal(err)
		}
	}
	// An image only the registry holds.
	pushed := labelled(t, map[string]string{images.LabelComponent: "tanzu-addons-manager"})
	d, err := pushed.Digest()
	if err != nil {
		t.Fatal(err)
	}
	inRegistry, err := name.NewDigest(host+"/slipway-dev/addons-controller@"+d.String(), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(inRegistry, pushed); err != nil {
		t.Fatal(err)
	}
	kappDigest, err := kapp.Digest()
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{images: &imageStore{layout: dir}}
	for image, want := range map[string]string{
		kappRef: "kapp-controller",
		// Relocated by imgpkg: named by the copy's repository and the digest only.
		"stopped.registry.example/relocated/slipway-repo@" + kappDigest.String(): "kapp-controller",
		inRegistry.String(): "tanzu-addons-manager",
		antreaRef:           "",
		host + "/relocated/repo@sha256:" + strings.Repeat("0", 64): "",
		// Neither preloaded nor on this host: not looked for.
		"registry.example.com/tkg/antrea@sha256:" + strings.Repeat("1", 64): "",
	} {
		c, ok := a.componentFor(image)
		if c != want || ok != (want != "") {
			t.Errorf("%s runs %q (%v), want %q", image, c, ok, want)
		}
	}
}
