package cluster

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/local/vm"
)

//go:embed manifests/*.yaml
var manifests embed.FS

// Manifest sets applied while a cluster starts, as kind applies them.
const (
	// ManifestStorage is kind's default StorageClass.
	ManifestStorage = "storage.yaml"
	// ManifestLocalPath is the StorageClass's provisioner on real nodes, as kind installs it:
	// Rancher's local-path-provisioner, making each volume a directory of its node.
	ManifestLocalPath = "local-path.yaml"
)

// fieldOwner is the field manager of what slipway applies.
const fieldOwner = client.FieldOwner("slipway")

// manifestValues are what the manifests are rendered with.
type manifestValues struct {
	// LocalPathImage is the image of the StorageClass's provisioner; LocalPathDir is where it
	// makes volumes on a node.
	LocalPathImage, LocalPathDir string
}

func newManifestValues() manifestValues {
	return manifestValues{LocalPathImage: assets.LocalPathProvisionerImage, LocalPathDir: vm.LocalPathDir}
}

// renderManifest returns the objects of one manifest set.
func renderManifest(name string, values manifestValues) ([]*unstructured.Unstructured, error) {
	raw, err := manifests.ReadFile("manifests/" + name)
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New(name).Option("missingkey=error").Parse(string(raw))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, values); err != nil {
		return nil, err
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(&buf, 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := decoder.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				break
			}
			return nil, fmt.Errorf("manifest %s: %w", name, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs, nil
}

// applyManifest applies one manifest set with server-side apply.
func applyManifest(ctx context.Context, c client.Client, name string, values manifestValues) error {
	objs, err := renderManifest(name, values)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), fieldOwner, client.ForceOwnership); err != nil {
			return fmt.Errorf("failed to apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}
