// Package capabilities is TKG's tanzu-capabilities-controller-manager: it answers each
// Capability's queries (is an API group, version or resource served; does an object exist, with
// or without annotations; does the cluster's OpenAPI schema contain a fragment) with the
// permissions of the service account the Capability names, and writes the answers to its status.
package capabilities
