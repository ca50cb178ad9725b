package cluster

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/local/vm"
)

// TestManifestsRender renders every manifest set with a real node's values: a value a template
// names and the values lack fails it (missingkey=error).
func TestManifestsRender(t *testing.T) {
	values := newManifestValues()
	for _, name := range []string{ManifestStorage, ManifestLocalPath} {
		objs, err := renderManifest(name, values)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if len(objs) == 0 {
			t.Errorf("%s renders no object", name)
		}
	}
}

// TestLocalPathProvisioner checks that the StorageClass's provisioner runs the image `make
// images` builds, as its own helper, and makes volumes in the node's directory for them.
func TestLocalPathProvisioner(t *testing.T) {
	objs, err := renderManifest(ManifestLocalPath, newManifestValues())
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			c := containers[0].(map[string]any)
			command, _, _ := unstructured.NestedStringSlice(c, "command")
			cmd := strings.Join(command, " ")
			if c["image"] != assets.LocalPathProvisionerImage || !strings.Contains(cmd, "--helper-image "+assets.LocalPathProvisionerImage) {
				t.Errorf("the provisioner runs %v with %q", c["image"], cmd)
			}
			found["Deployment"] = true
		case "ConfigMap":
			data, _, _ := unstructured.NestedStringMap(o.Object, "data")
			if !strings.Contains(data["config.json"], `"paths": ["`+vm.LocalPathDir+`"]`) ||
				!strings.Contains(data["helperPod.yaml"], "image: "+assets.LocalPathProvisionerImage) {
				t.Errorf("config: %v", data)
			}
			found["ConfigMap"] = true
		}
	}
	if !found["Deployment"] || !found["ConfigMap"] {
		t.Errorf("found %v", found)
	}
}
