//go:build tools

// Package tools pins the main package `make images` builds from this module.
package tools

import _ "k8s.io/cloud-provider-vsphere/cmd/vsphere-cloud-controller-manager"
