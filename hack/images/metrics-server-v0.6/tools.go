//go:build tools

// Package tools pins the main package `make images` builds from this module.
package tools

import _ "sigs.k8s.io/metrics-server/cmd/metrics-server"
