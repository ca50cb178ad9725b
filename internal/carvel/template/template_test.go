package template

import (
	"strings"
	"testing"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"

	"github.com/slipway-dev/slipway/internal/test/testfiles"
)

func TestYttWithSchemaPathValuesAndKbld(t *testing.T) {
	dir := testfiles.WriteTree(t, map[string]string{
		"config/schema.yml": "#@data/values-schema\n---\nreplicas: 1\nimage: registry.example.com/web:v1\n",
		"config/app.yml": "#@ load(\"@ytt:data\", \"data\")\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: #@ data.values.replicas\n" +
			"  template:\n    spec:\n      containers:\n      - name: web\n        image: #@ data.values.image\n",
		"values.yml":         "replicas: 3\n",
		".imgpkg/images.yml": "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\nimages:\n- image: localhost:5000/web@sha256:abc\n  annotations:\n    kbld.carvel.dev/id: registry.example.com/web:v1\n",
	})
	out, err := Template(t.Context(), nil, "ns", []kappctrlv1alpha1.AppTemplate{
		{Ytt: &kappctrlv1alpha1.AppTemplateYtt{Paths: []string{"config"}, ValuesFrom: []kappctrlv1alpha1.AppTemplateValuesSource{{Path: "values.yml"}}}},
		{Kbld: &kappctrlv1alpha1.AppTemplateKbld{Paths: []string{"-", ".imgpkg/images.yml"}}},
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"replicas: 3", "image: localhost:5000/web@sha256:abc"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
