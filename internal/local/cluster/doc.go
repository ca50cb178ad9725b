// Package cluster keeps the state of local clusters (one directory per cluster under the user's
// config directory) and runs the flows behind `slipway local cluster`: create, list, delete,
// kubeconfig and start, as kind's create, get, delete and get kubeconfig do.
package cluster
