// Package v1alpha1 holds the cpi.tanzu.vmware.com/v1alpha1 API of TKG 2.x: the configuration of a cluster's
// vSphere cloud provider package (VSphereCPIConfig), paravirtual or not.
// Its controller writes each object into the data-values Secret of the package it configures
// and names that Secret in status.secretRef, the provider contract of ClusterBootstrap.
//
// +kubebuilder:object:generate=true
// +groupName=cpi.tanzu.vmware.com
package v1alpha1
