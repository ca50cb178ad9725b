package packaging

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// AvailableRow is one line of `package available list`.
type AvailableRow struct {
	Name, DisplayName, ShortDescription, LatestVersion, Namespace string
}

// VersionRow is one line of `package available list NAME`.
type VersionRow struct {
	Name, Version, ReleasedAt, Namespace string
}

// ValuesRow is one line of `package available get --values-schema`.
type ValuesRow struct {
	Key, Default, Type, Description string
}

// AvailableList lists the packages available in a namespace ("" for all).
func (c *Client) AvailableList(ctx context.Context, namespace string) ([]AvailableRow, error) {
	var metadata []datapkgingv1alpha1.PackageMetadata
	for _, ns := range c.visible(namespace) {
		list := &datapkgingv1alpha1.PackageMetadataList{}
		if err := c.C.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("failed to list available packages: %w", err)
		}
		metadata = append(metadata, list.Items...)
	}
	var rows []AvailableRow
	for _, m := range metadata {
		pkgs, err := c.packagesOf(ctx, m.Name, m.Namespace)
		if err != nil {
			return nil, err
		}
		rows = append(rows, AvailableRow{Name: m.Name, DisplayName: m.Spec.DisplayName, ShortDescription: m.Spec.ShortDescription,
			LatestVersion: latestVersion(pkgs), Namespace: m.Namespace})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows, nil
}

// AvailableVersions lists the versions of a package.
func (c *Client) AvailableVersions(ctx context.Context, refName, namespace string) ([]VersionRow, error) {
	pkgs, err := c.packagesOf(ctx, refName, namespace)
	if err != nil {
		return nil, err
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("package '%s' is not available in namespace '%s': `slipway package available list` shows what is", refName, namespace)
	}
	rows := make([]VersionRow, 0, len(pkgs))
	for _, p := range pkgs {
		released := ""
		if !p.Spec.ReleasedAt.IsZero() {
			released = p.Spec.ReleasedAt.String()
		}
		rows = append(rows, VersionRow{Name: p.Spec.RefName, Version: p.Spec.Version, ReleasedAt: released, Namespace: p.Namespace})
	}
	return rows, nil
}

// AvailableGet returns a package version ("name/version"; the latest when no version is given).
func (c *Client) AvailableGet(ctx context.Context, nameVersion, namespace string) (*datapkgingv1alpha1.Package, error) {
	refName, version, _ := strings.Cut(nameVersion, "/")
	pkgs, err := c.packagesOf(ctx, refName, namespace)
	if err != nil {
		return nil, err
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("package '%s' is not available in namespace '%s'", refName, namespace)
	}
	if version == "" {
		return &pkgs[len(pkgs)-1], nil
	}
	for _, p := range pkgs {
		if p.Spec.Version == version {
			return &p, nil
		}
	}
	var versions []string
	for _, p := range pkgs {
		versions = append(versions, p.Spec.Version)
	}
	return nil, fmt.Errorf("package '%s' has no version '%s': available versions are %s", refName, version, strings.Join(versions, ", "))
}

// ValuesSchema flattens a package's values schema into key, default, type and description rows.
func ValuesSchema(p *datapkgingv1alpha1.Package) ([]ValuesRow, error) {
	if len(p.Spec.ValuesSchema.OpenAPIv3.Raw) == 0 {
		return nil, nil
	}
	var schema map[string]interface{}
	if err := yaml.Unmarshal(p.Spec.ValuesSchema.OpenAPIv3.Raw, &schema); err != nil {
		return nil, fmt.Errorf("package %s has an invalid values schema: %w", p.Name, err)
	}
	var rows []ValuesRow
	var walk func(prefix string, s map[string]interface{})
	walk = func(prefix string, s map[string]interface{}) {
		props, _ := s["properties"].(map[string]interface{})
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			prop, _ := props[k].(map[string]interface{})
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			if t, _ := prop["type"].(string); t == "object" && prop["properties"] != nil {
				walk(key, prop)
				continue
			}
			def := ""
			if d, ok := prop["default"]; ok {
				def = fmt.Sprint(d)
			}
			t, _ := prop["type"].(string)
			desc, _ := prop["description"].(string)
			rows = append(rows, ValuesRow{Key: key, Default: def, Type: t, Description: desc})
		}
	}
	walk("", schema)
	return rows, nil
}

// DefaultValues writes a package's values with their defaults as YAML, each key under a comment
// of its description, as `package available get --generate-default-values-file` gives them: a
// starting point for --values-file. Keys without a default are left out.
func DefaultValues(p *datapkgingv1alpha1.Package) ([]byte, error) {
	if len(p.Spec.ValuesSchema.OpenAPIv3.Raw) == 0 {
		return nil, fmt.Errorf("package %s/%s has no values schema: it takes no values", p.Spec.RefName, p.Spec.Version)
	}
	var schema map[string]interface{}
	if err := yaml.Unmarshal(p.Spec.ValuesSchema.OpenAPIv3.Raw, &schema); err != nil {
		return nil, fmt.Errorf("package %s has an invalid values schema: %w", p.Name, err)
	}
	out, err := defaultValues("", schema)
	return []byte(out), err
}

// defaultValues is the YAML of one object's properties that have defaults, at indent.
func defaultValues(indent string, s map[string]interface{}) (string, error) {
	props, _ := s["properties"].(map[string]interface{})
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out strings.Builder
	for _, k := range keys {
		prop, _ := props[k].(map[string]interface{})
		if t, _ := prop["type"].(string); t == "object" && prop["properties"] != nil {
			body, err := defaultValues(indent+"  ", prop)
			if err != nil {
				return "", err
			}
			if body != "" {
				writeComment(&out, indent, prop)
				fmt.Fprintf(&out, "%s%s:\n%s", indent, k, body)
			}
			continue
		}
		def, ok := prop["default"]
		if !ok {
			continue
		}
		// One line for every value: a list or a map is written in JSON, which YAML reads.
		v, err := json.Marshal(def)
		if err != nil {
			return "", err
		}
		writeComment(&out, indent, prop)
		fmt.Fprintf(&out, "%s%s: %s\n", indent, k, v)
	}
	return out.String(), nil
}

// writeComment writes a schema property's description as a YAML comment.
func writeComment(out *strings.Builder, indent string, prop map[string]interface{}) {
	desc, _ := prop["description"].(string)
	for _, line := range strings.Split(strings.TrimSpace(desc), "\n") {
		if line != "" {
			fmt.Fprintf(out, "%s# %s\n", indent, line)
		}
	}
}
