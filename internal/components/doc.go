// Package components maps container images to slipway's in-cluster components and runs them.
// On the local runtime, the node agent runs a pod whose image is a known component as the child
// process `slipway component run <name> <args>`, with the pod's args and environment, its
// volumes written to disk and its service-account token, exactly as in a container; any other
// image is simulated. The same manifests run the upstream images on a real cluster.
package components
