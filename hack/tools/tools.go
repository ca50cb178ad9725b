//go:build tools

// Package tools pins the generators that the Makefile builds into bin/tools.
package tools

import (
	_ "honnef.co/go/tools/cmd/staticcheck"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
