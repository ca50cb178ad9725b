// Package packagesource renders the package sources in packages/ for tests, as the package
// controller's template stage renders their bundles.
package packagesource

import (
	"path/filepath"
	"testing"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"

	"github.com/slipway-dev/slipway/internal/assets"
	bundlepkg "github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/carvel/template"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
)

// Render renders the package source in packages/<dir> (such as tkg.tanzu.vmware.com/2.5.2)
// with the values document, through ytt and with the bundle's files.
func Render(t *testing.T, dir, values string) ([]byte, error) {
	t.Helper()
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := bundlepkg.Files(filepath.Join(root, "packages", dir, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	tree := map[string]string{"values.yml": values}
	for p, data := range files {
		tree[p] = string(data)
	}
	steps := []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{Paths: []string{"config/"},
		ValuesFrom: []kappctrlv1alpha1.AppTemplateValuesSource{{Path: "values.yml"}}}}}
	return template.Template(t.Context(), nil, "default", steps, testfiles.WriteTree(t, tree))
}
