// Package e2e holds slipway's end-to-end tests: they build the slipway binary and drive it as a
// user would, on the local runtime.
package e2e
