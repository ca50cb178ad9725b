// Package v1alpha2 holds TanzuKubernetesRelease in the run.tanzu.vmware.com/v1alpha2 shape of
// vSphere with Tanzu, which has v1alpha1's fields; the conversion webhook converts it to and
// from the v1alpha3 hub.
//
// +kubebuilder:object:generate=true
// +groupName=run.tanzu.vmware.com
package v1alpha2
