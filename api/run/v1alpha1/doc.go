// Package v1alpha1 holds the run.tanzu.vmware.com/v1alpha1 kinds slipway serves: Capability,
// TKG's way for a client to ask a cluster what it can do (API groups, objects, schemas) with a
// service account's permissions, and TanzuKubernetesRelease in its first shape, which the
// conversion webhook converts to and from the v1alpha3 hub.
//
// +kubebuilder:object:generate=true
// +groupName=run.tanzu.vmware.com
package v1alpha1
