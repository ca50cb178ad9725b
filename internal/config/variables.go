package config

import (
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Variables are a flat configuration: variable names to values, as a file gives them, with the
// environment overriding the file as in TKG, and flags overriding both.
type Variables struct {
	values map[string]string
	// from says where each value came from: "file", "environment", "flag" or "default".
	from map[string]string
}

// NewVariables returns an empty configuration.
func NewVariables() *Variables {
	return &Variables{values: map[string]string{}, from: map[string]string{}}
}

// Read reads a flat configuration file; an empty path is an empty file. Every known variable
// set in environ (os.Environ's form) overrides the file's value.
func Read(path string, environ []string) (*Variables, error) {
	v := NewVariables()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("failed to read the configuration file: %w", err)
		}
		if err := v.parse(data); err != nil {
			return nil, fmt.Errorf("configuration file %s: %w", path, err)
		}
	}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && known(name) {
			v.set(name, value, "environment")
		}
	}
	return v, nil
}

// Parse reads a flat configuration file's content, as Read reads the file, without the
// environment.
func Parse(data []byte) (*Variables, error) {
	v := NewVariables()
	if err := v.parse(data); err != nil {
		return nil, err
	}
	return v, nil
}

// Values returns every variable set, by name.
func (v *Variables) Values() map[string]string {
	return maps.Clone(v.values)
}

// parse reads VARIABLE: value lines. Values may be strings, numbers or booleans; nested values
// are refused, as TKG's flat files have none.
func (v *Variables) parse(data []byte) error {
	raw := map[string]any{}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("it is not a flat YAML file of VARIABLE: value lines: %w", err)
	}
	if kind, ok := raw["kind"]; ok {
		return fmt.Errorf("it is a Kubernetes object (kind %v), not a flat configuration file of VARIABLE: value lines", kind)
	}
	for name, value := range raw {
		switch value.(type) {
		case nil:
			continue
		case string, bool, float64, int64, int:
			v.set(name, strings.TrimSpace(fmt.Sprint(value)), "file")
		default:
			return fmt.Errorf("%s has a nested value: a flat configuration file holds only strings, numbers and booleans", name)
		}
	}
	return nil
}

func (v *Variables) set(name, value, from string) {
	v.values[name] = value
	v.from[name] = from
}

// Set sets a variable from a flag, which overrides the file and the environment.
func (v *Variables) Set(name, value string) { v.set(name, value, "flag") }

// Get returns a variable's value and whether it is set to something not empty.
func (v *Variables) Get(name string) (string, bool) {
	value, ok := v.values[name]
	return value, ok && value != ""
}

// Names returns the variables set, sorted.
func (v *Variables) Names() []string {
	names := make([]string, 0, len(v.values))
	for n := range v.values {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Unknown returns the variables set that slipway does not know, sorted: TKG ignores them too,
// and the flows warn about them, since a misspelt name is otherwise silently ignored.
func (v *Variables) Unknown() []string {
	var unknown []string
	for _, n := range v.Names() {
		if !known(n) {
			unknown = append(unknown, n)
		}
	}
	return unknown
}

// Marshal returns the variables as a flat configuration file, sorted by name. A password or
// client secret is written <encoded:BASE64>, as TKG saves it.
func (v *Variables) Marshal() ([]byte, error) {
	m := make(map[string]string, len(v.values))
	for n, value := range v.values {
		if slices.Contains(secretVariables, n) {
			value = encodeSecret(value)
		}
		m[n] = value
	}
	return yaml.Marshal(m)
}

// encodedPrefix starts a value TKG stores base64-encoded: <encoded:BASE64>.
const encodedPrefix = "<encoded:"

// secretVariables are written <encoded:BASE64> in a saved file, as TKG saves them.
var secretVariables = []string{VSpherePassword, OIDCClientSecret, LDAPBindPassword}

// encodeSecret returns a secret variable's value as TKG saves it: <encoded:BASE64>.
func encodeSecret(value string) string {
	if value == "" || strings.HasPrefix(value, encodedPrefix) {
		return value
	}
	return encodedPrefix + base64.StdEncoding.EncodeToString([]byte(value)) + ">"
}

// decoded returns a value given as <encoded:BASE64> decoded, and any other value as it is.
func decoded(value string) (string, error) {
	inner, ok := strings.CutPrefix(value, encodedPrefix)
	if !ok {
		return value, nil
	}
	inner, ok = strings.CutSuffix(inner, ">")
	if !ok {
		return "", fmt.Errorf("an encoded value ends with '>'")
	}
	plain, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", fmt.Errorf("the text between %q and '>' is not base64", encodedPrefix)
	}
	return string(plain), nil
}
