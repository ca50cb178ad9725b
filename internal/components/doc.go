// Package components maps container images to slipway's in-cluster components and runs them as
// `slipway component run <name> <args>`: an image slipway builds runs its component in a
// container, on the local runtime's nodes as on any cluster, with its entrypoint.
package components
