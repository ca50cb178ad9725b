package propagation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Entry is one kind of object to propagate, in TKG's configuration format.
type Entry struct {
	Source Source `json:"source"`
	Target Target `json:"target"`
}

// Source says which objects are propagated.
type Source struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	// LabelSelector picks the objects of the namespace to propagate; empty picks all.
	LabelSelector string `json:"labelSelector"`
}

// Target says where they go.
type Target struct {
	// NamespaceLabelSelector picks the namespaces that receive copies; empty picks all.
	NamespaceLabelSelector string `json:"namespaceLabelSelector"`
	// DetectAndReplaceSourceNSRef replaces every string value equal to the source namespace by
	// the copy's namespace, so that references within the namespace follow the copy.
	DetectAndReplaceSourceNSRef bool `json:"detectAndReplaceSourceNSRef"`
}

// config is an Entry made ready for use.
type config struct {
	Entry
	gvk      schema.GroupVersionKind
	selector labels.Selector
	targets  labels.Selector
}

// Parse reads a configuration: a YAML list of entries.
func Parse(data []byte) ([]Entry, error) {
	var entries []Entry
	if err := yaml.UnmarshalStrict(data, &entries); err != nil {
		return nil, fmt.Errorf("the propagation configuration is not a list of source/target entries: %w", err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("the propagation configuration has no entries: list at least one source and target")
	}
	for i, e := range entries {
		if _, err := prepare(e); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
	}
	return entries, nil
}

func prepare(e Entry) (*config, error) {
	for _, f := range []struct{ name, value string }{
		{"source.apiVersion", e.Source.APIVersion}, {"source.kind", e.Source.Kind}, {"source.namespace", e.Source.Namespace},
	} {
		if f.value == "" {
			return nil, fmt.Errorf("%s is empty: name the objects to propagate by apiVersion, kind and namespace", f.name)
		}
	}
	gv, err := schema.ParseGroupVersion(e.Source.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("source.apiVersion %q: %w", e.Source.APIVersion, err)
	}
	c := &config{Entry: e, gvk: gv.WithKind(e.Source.Kind)}
	if c.selector, err = labels.Parse(e.Source.LabelSelector); err != nil {
		return nil, fmt.Errorf("source.labelSelector %q: %w", e.Source.LabelSelector, err)
	}
	if c.targets, err = labels.Parse(e.Target.NamespaceLabelSelector); err != nil {
		return nil, fmt.Errorf("target.namespaceLabelSelector %q: %w", e.Target.NamespaceLabelSelector, err)
	}
	return c, nil
}
