// Package v1alpha2 holds TKG's core.tanzu.vmware.com/v1alpha2 feature gating API: a Feature is a
// capability that code may gate, with a stability level whose policy says whether it is
// activated by default and whether it may be toggled; a FeatureGate is an operator's intent to
// activate or deactivate Features. The tanzu-featuregates package installs the CRDs, the
// controller that computes each Feature's activation and the webhook that refuses toggles a
// policy forbids. Field names and JSON tags follow TKG.
//
// +kubebuilder:object:generate=true
// +groupName=core.tanzu.vmware.com
package v1alpha2
