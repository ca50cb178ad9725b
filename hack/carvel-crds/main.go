// Command carvel-crds finishes the CRDs that controller-gen generates from kapp-controller
// v0.50.0's Go types: kapp-controller serves Package and PackageMetadata from an aggregated API
// server, which slipway replaces with CRDs, so their names, short names and printer columns are
// set here to what `kubectl get` shows against kapp-controller.
//
// Usage: go run ./hack/carvel-crds DIR (rewrites the CRDs in DIR in place)
package main

import (
	"fmt"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// names are what kapp-controller's APIs are called, by CRD file.
var names = map[string]struct {
	crdName, plural string
	shortNames      []string
	columns         []apiextensionsv1.CustomResourceColumnDefinition
}{
	"data.packaging.carvel.dev_packagemetadata.yaml": {
		crdName: "packagemetadatas.data.packaging.carvel.dev", plural: "packagemetadatas", shortNames: []string{"pkgm"},
		columns: []apiextensionsv1.CustomResourceColumnDefinition{
			{Name: "Display name", Type: "string", JSONPath: ".spec.displayName"},
			{Name: "Categories", Type: "string", JSONPath: ".spec.categories"},
			{Name: "Short description", Type: "string", JSONPath: ".spec.shortDescription"},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		},
	},
	"data.packaging.carvel.dev_packages.yaml": {
		crdName: "packages.data.packaging.carvel.dev", plural: "packages", shortNames: []string{"pkg"},
		columns: []apiextensionsv1.CustomResourceColumnDefinition{
			{Name: "Package metadata name", Type: "string", JSONPath: ".spec.refName"},
			{Name: "Version", Type: "string", JSONPath: ".spec.version"},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		},
	},
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: carvel-crds DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dir string) error {
	for file, n := range names {
		path := filepath.Join(dir, file)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		crd.Name = n.crdName
		crd.Spec.Names.Plural = n.plural
		crd.Spec.Names.ShortNames = n.shortNames
		crd.Spec.Names.Categories = []string{"carvel"}
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].AdditionalPrinterColumns = n.columns
		}
		out, err := yaml.Marshal(crd)
		if err != nil {
			return err
		}
		if err := os.Remove(path); err != nil {
			return err
		}
		target := filepath.Join(dir, fmt.Sprintf("%s_%s.yaml", crd.Spec.Group, n.plural))
		if err := os.WriteFile(target, append([]byte("---\n"), out...), 0o644); err != nil {
			return err
		}
	}
	return nil
}
