// Package images holds what slipway's images say of themselves and where `make images` keeps
// them: the labels of their configs, the environment that makes slipway's binary run a
// component, and the OCI image layout they are built into, read by the bundle tooling and the
// provider repository to lock them by digest; and the stand-ins, the images that cannot be
// built here, by which a pod of one is told simulated.
package images
