// Package nodeservice is the local runtime's node service: a process on the host that does for a
// provider in a container what the provider does itself on the host (cluster.Host), on a Unix
// socket that every real node binds at /run/slipway. A management cluster of real nodes runs its
// `local` infrastructure provider in a pod on one of them; from there it makes, starts and
// deletes nodes of this host through the service, as CAPD makes its nodes through Docker's
// socket. The API is one JSON call a POST, /v1/<method>.
package nodeservice
