package cluster

import (
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Name lengths. A cluster's node names are built from its name (NAME-control-plane2 is the
// longest kind builds), and node names are DNS-1123 labels, so a cluster name leaves room for the
// longest suffix. Every socket of a node lives in its node directory or, when that path is too
// long for a socket, in the temporary directory under a hashed name, so no name makes a socket
// path too long.
const (
	// MaxNameLength is the longest local cluster name.
	MaxNameLength = 40
	// MaxNodeNameLength is the longest node name: a DNS-1123 label.
	MaxNodeNameLength = validation.DNS1123LabelMaxLength
)

// ValidateName checks that a local cluster name is a name and never a path: a DNS-1123 label
// (lowercase letters, digits and '-', starting and ending with a letter or digit) of at most
// MaxNameLength characters. Every command and API that takes a local cluster name checks it
// before touching the store.
func ValidateName(name string) error {
	return validateLabel("local cluster", name, MaxNameLength)
}

// ValidateNodeName checks that a node name is a DNS-1123 label of at most MaxNodeNameLength
// characters, for the same reasons as ValidateName.
func ValidateNodeName(name string) error {
	return validateLabel("node", name, MaxNodeNameLength)
}

func validateLabel(what, name string, max int) error {
	const rule = "a name is a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit"
	if name == "" {
		return fmt.Errorf("invalid %s name: the name is empty; %s, at most %d characters", what, rule, max)
	}
	if len(name) > max {
		return fmt.Errorf("invalid %s name %q: %d characters, at most %d are accepted; %s", what, name, len(name), max, rule)
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("invalid %s name %q: %s, at most %d characters", what, name, rule, max)
	}
	return nil
}

// Dirs returns the directories of a cluster. It refuses a name that is not a valid local cluster
// name and, as a second line, any name whose directory would not be a direct child of the
// store's root.
func (s Store) Dirs(name string) (Dirs, error) {
	if err := ValidateName(name); err != nil {
		return Dirs{}, err
	}
	root, err := filepath.Abs(s.Root)
	if err != nil {
		return Dirs{}, fmt.Errorf("failed to resolve the store directory %s: %w", s.Root, err)
	}
	dir := filepath.Join(root, name)
	if rel, err := filepath.Rel(root, dir); err != nil || rel != name || strings.ContainsRune(rel, filepath.Separator) {
		return Dirs{}, fmt.Errorf("local cluster name %q leaves the store %s: refused", name, root)
	}
	return Dirs{Root: dir}, nil
}
