// Package components maps container images to slipway's in-cluster components and runs them as
// `slipway component run <name> <args>`. An image slipway builds runs its component in a
// container on real nodes (and on a real cluster) with its entrypoint. On the node agent of the
// local runtime (--node-runtime agent), which runs no containers, the agent runs a pod whose
// image is a known component as that child process, with the pod's args and environment, its
// volumes written to disk and its service-account token, as in a container; any other image is
// simulated there, and says so.
package components
