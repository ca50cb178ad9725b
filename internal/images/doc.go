// Package images holds what slipway's images say of themselves and where `make images` keeps
// them: the labels of their configs, the environment that makes slipway's binary run a
// component, and the OCI image layout they are built into, read by the bundle tooling and the
// provider repository to lock them by digest.
package images
