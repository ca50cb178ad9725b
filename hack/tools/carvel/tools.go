//go:build tools

// Package carvel pins Carvel's kapp and imgpkg, which slipway's e2e tests run on slipway's
// package records and bundles as a user would.
package carvel

import (
	_ "carvel.dev/imgpkg/cmd/imgpkg"
	_ "carvel.dev/kapp/cmd/kapp"
)
