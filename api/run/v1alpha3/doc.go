// Package v1alpha3 holds the run.tanzu.vmware.com/v1alpha3 API of TKG 2.x that slipway serves:
// the Kubernetes release catalogue (TanzuKubernetesRelease, OSImage), the per-cluster add-on
// bill of materials (ClusterBootstrapTemplate, ClusterBootstrap) and the kapp-controller add-on
// configuration (KappControllerConfig). Field names, JSON tags and CRD shapes follow TKG so that
// TKG manifests apply unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=run.tanzu.vmware.com
package v1alpha3
