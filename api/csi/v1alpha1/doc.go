// Package v1alpha1 holds the csi.tanzu.vmware.com/v1alpha1 API of TKG 2.x: the configuration of a cluster's
// vSphere storage package (VSphereCSIConfig), paravirtual or not.
// Its controller writes each object into the data-values Secret of the package it configures
// and names that Secret in status.secretRef, the provider contract of ClusterBootstrap.
//
// +kubebuilder:object:generate=true
// +groupName=csi.tanzu.vmware.com
package v1alpha1
