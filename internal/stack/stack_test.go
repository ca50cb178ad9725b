package stack_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/modfile"

	_ "carvel.dev/imgpkg/pkg/imgpkg/v1"
	_ "carvel.dev/ytt/pkg/cmd/template"
	_ "github.com/google/go-containerregistry/pkg/registry"
	_ "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	_ "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	_ "github.com/vmware/govmomi/simulator"
	_ "sigs.k8s.io/cluster-api-provider-vsphere/controllers"
	_ "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	_ "sigs.k8s.io/cluster-api/controllers"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/slipway-dev/slipway/internal/assets"
)

// pinned are the versions slipway is built and tested with. Cluster API stays on 1.13 because
// the newest vSphere provider the module proxy serves (v1.16.1) requires it.
var pinned = map[string]string{
	"sigs.k8s.io/cluster-api":                        "v1.13.4",
	"sigs.k8s.io/cluster-api-provider-vsphere":       "v1.16.1",
	"github.com/vmware/govmomi":                      "v0.53.0",
	"sigs.k8s.io/controller-runtime":                 "v0.23.3",
	"k8s.io/api":                                     "v0.35.4",
	"k8s.io/apimachinery":                            "v0.35.4",
	"k8s.io/client-go":                               "v0.35.4",
	"k8s.io/apiextensions-apiserver":                 "v0.35.4",
	"carvel.dev/ytt":                                 "v0.52.0",
	"carvel.dev/imgpkg":                              "v0.44.0",
	"github.com/google/go-containerregistry":         "v0.20.3",
	"github.com/vmware-tanzu/carvel-kapp-controller": "v0.50.0",
}

// TestPinnedVersions reads go.mod, which with module graph pruning lists the selected version of
// every module the build uses.
func TestPinnedVersions(t *testing.T) {
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range mod.Replace {
		t.Errorf("go.mod replaces %s: the product module must not use replace, so that `go install` works", r.Old.Path)
	}
	got := map[string]string{}
	for _, r := range mod.Require {
		got[r.Mod.Path] = r.Mod.Version
	}
	for module, want := range pinned {
		if got[module] != want {
			t.Errorf("go.mod has %s at %q, want %s: keep the pinned stack or check that the replacement resolves with the rest", module, got[module], want)
		}
	}
	if v, ok := got["cloud.google.com/go"]; ok && v != "v0.116.0" {
		t.Errorf("go.mod has cloud.google.com/go at %s, want v0.116.0: imgpkg's older one makes an ambiguous import", v)
	}
}
