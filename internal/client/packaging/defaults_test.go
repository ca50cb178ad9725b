package packaging

import (
	"strings"
	"testing"

	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// TestDefaultValues writes nested defaults under their descriptions, lists and maps on one
// line, and leaves out what has no default; the file reads back as the defaults.
func TestDefaultValues(t *testing.T) {
	schema := `type: object
properties:
  namespace:
    type: string
    default: kube-system
    description: Where it runs.
  proxy:
    type: object
    description: |
      The proxy.
      Empty is none.
    properties:
      noProxy:
        type: array
        default: [localhost, 127.0.0.1]
      httpProxy:
        type: string
  replicas:
    type: integer
    default: 2
  token:
    type: string
`
	js, err := yaml.YAMLToJSON([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	p := &datapkgingv1alpha1.Package{}
	p.Spec.RefName, p.Spec.Version = "x.example.com", "1.0.0"
	p.Spec.ValuesSchema.OpenAPIv3 = runtime.RawExtension{Raw: js}
	data, err := DefaultValues(p)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Where it runs.\nnamespace: \"kube-system\"\n# The proxy.\n# Empty is none.\nproxy:\n  noProxy: [\"localhost\",\"127.0.0.1\"]\nreplicas: 2\n"
	if string(data) != want {
		t.Errorf("got:\n%s\nwant:\n%s", data, want)
	}
	var back map[string]any
	if err := yaml.Unmarshal(data, &back); err != nil || back["replicas"] != float64(2) || back["namespace"] != "kube-system" {
		t.Errorf("reads back as %v, %v", back, err)
	}
	p.Spec.ValuesSchema.OpenAPIv3.Raw = nil
	if _, err := DefaultValues(p); err == nil || !strings.Contains(err.Error(), "x.example.com/1.0.0 has no values schema") {
		t.Errorf("no schema: %v", err)
	}
}
