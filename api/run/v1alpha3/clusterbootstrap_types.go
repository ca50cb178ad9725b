package v1alpha3

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterBootstrapStatus is the observed state of a ClusterBootstrap.
type ClusterBootstrapStatus struct {
	// ResolvedTKR is the release whose packages the cluster runs.
	// +optional
	ResolvedTKR string `json:"resolvedTKR,omitempty"`

	// Conditions report the packages on the cluster, such as Antrea-ReconcileSucceeded.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
}

// ClusterBootstrap is the package set of one cluster: it has the cluster's name and namespace,
// is owned by the Cluster, and starts as a clone of its release's ClusterBootstrapTemplate.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clusterbootstraps,shortName=cb,scope=Namespaced
// +kubebuilder:printcolumn:name="CNI",type="string",JSONPath=".spec.cni.refName",description="CNI package name and version"
// +kubebuilder:printcolumn:name="CSI",type="string",JSONPath=".spec.csi.refName",description="CSI package name and version"
// +kubebuilder:printcolumn:name="CPI",type="string",JSONPath=".spec.cpi.refName",description="CPI package name and version"
// +kubebuilder:printcolumn:name="Kapp",type="string",JSONPath=".spec.kapp.refName",description="Kapp package name and version"
// +kubebuilder:printcolumn:name="Additional Packages",type="string",JSONPath=".spec.additionalPackages[*].refName",description="Additional packages",priority=10
// +kubebuilder:printcolumn:name="Resolved_TKR",type="string",JSONPath=".status.resolvedTKR",description="Resolved TKR name"
type ClusterBootstrap struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   *ClusterBootstrapTemplateSpec `json:"spec"`
	Status ClusterBootstrapStatus        `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterBootstrapList is a list of ClusterBootstrap.
type ClusterBootstrapList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterBootstrap `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ClusterBootstrap{}, &ClusterBootstrapList{})
}
