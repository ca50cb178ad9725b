// Package v1alpha1 holds TKG's cli.tanzu.vmware.com/v1alpha1 API: CLIPlugin, which tells the
// tanzu CLI which plugins, at which versions, to use against a management cluster (context-aware
// plugin discovery). The tanzu-cliplugins package installs its CRD and
// tanzu-core-management-plugins the management plugins' objects. Field names and JSON tags
// follow TKG.
//
// +kubebuilder:object:generate=true
// +groupName=cli.tanzu.vmware.com
package v1alpha1
