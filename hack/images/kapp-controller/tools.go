//go:build tools

// Package tools pins the main package `make images` builds from this module.
package tools

import _ "github.com/vmware-tanzu/carvel-kapp-controller/cmd/controller"
