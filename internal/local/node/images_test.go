package node

import (
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/internal/controllers/packaging/bundle"
	"github.com/slipway-dev/slipway/internal/test/testregistry"
)

type componentsByImage map[string]string

func (c componentsByImage) ComponentFor(image string) (string, bool) {
	for prefix, component := range c {
		if strings.HasPrefix(image, prefix) {
			return component, true
		}
	}
	return "", false
}

// TestRelocatedPlaceholderRunsItsComponent gives the agent a pod image named only by the
// repository it was copied to: the placeholder's config says what it stands in for, and that
// image's component runs.
func TestRelocatedPlaceholderRunsItsComponent(t *testing.T) {
	host := testregistry.Start(t)
	img, err := bundle.Placeholder("projects.registry.vmware.com/tkg/kapp-controller:v0.50.1_vmware.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewDigest(host+"/relocated/repo@"+d.String(), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	a := &Agent{components: componentsByImage{"projects.registry.vmware.com/tkg/kapp-controller:": "kapp-controller"}}
	if c, ok := a.componentFor(ref.String()); !ok || c != "kapp-controller" {
		t.Errorf("relocated placeholder runs %q, %v", c, ok)
	}
	if _, ok := a.componentFor(host + "/relocated/repo@sha256:" + strings.Repeat("0", 64)); ok {
		t.Error("an image that is not in the registry runs a component")
	}
	if c, ok := a.componentFor("projects.registry.vmware.com/tkg/kapp-controller:v0.50.1_vmware.1"); !ok || c != "kapp-controller" {
		t.Errorf("the image by name runs %q, %v", c, ok)
	}
}
