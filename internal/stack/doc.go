// Package stack pins the upstream dependency set slipway is built on. Its test imports the
// pieces later packages build from (Cluster API's controllers and clusterctl client, the vSphere
// provider, govmomi's simulator, ytt, imgpkg, go-containerregistry's registry, kapp-controller's
// API types), so that go.mod holds them at the versions that are known to resolve and compile
// together, and checks those versions.
package stack
