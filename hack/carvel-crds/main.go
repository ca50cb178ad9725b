// Command carvel-crds finishes the CRDs that controller-gen generates from kapp-controller
// v0.50.0's Go types: kapp-controller serves Package and PackageMetadata from an aggregated API
// server, which slipway replaces with CRDs, so their names, short names and printer columns are
// set here to what `kubectl get` shows against kapp-controller. Every duration field
// (syncPeriod) is checked at admission: the types decode it with time.ParseDuration, so one
// object with a bad value would make every typed list of its kind fail to decode.
//
// Usage: go run ./hack/carvel-crds DIR (rewrites the CRDs in DIR in place)
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

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

// durationFields are the fields of kapp-controller's types that are a metav1.Duration.
var durationFields = []string{"syncPeriod"}

// durationRule accepts what time.ParseDuration accepts.
const durationRule = `self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`

// validateDurations adds the duration rule to every duration field of a schema.
func validateDurations(s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	for name, p := range s.Properties {
		if slices.Contains(durationFields, name) && p.Type == "string" {
			p.XValidations = apiextensionsv1.ValidationRules{{Rule: durationRule,
				Message: "must be a duration such as 30s, 10m or 1h30m (a number and a unit: ns, us, ms, s, m, h)"}}
		}
		validateDurations(&p)
		s.Properties[name] = p
	}
	if s.Items != nil {
		validateDurations(s.Items.Schema)
	}
}

func run(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for i := range crd.Spec.Versions {
			if v := crd.Spec.Versions[i].Schema; v != nil {
				validateDurations(v.OpenAPIV3Schema)
			}
		}
		n, renamed := names[filepath.Base(path)]
		if !renamed {
			out, err := yaml.Marshal(crd)
			if err != nil {
				return err
			}
			if err := os.WriteFile(path, append([]byte("---\n"), out...), 0o644); err != nil {
				return err
			}
			continue
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
