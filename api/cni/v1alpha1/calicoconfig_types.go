package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CalicoConfigSpec is the configuration of a cluster's calico package.
type CalicoConfigSpec struct {
	// Calico holds the package configuration.
	// +optional
	Calico Calico `json:"calico,omitempty,omitzero"`
}

// Calico holds the calico package configuration.
type Calico struct {
	// Config is the calico configuration written into the data values.
	// +optional
	Config CalicoConfigDataValue `json:"config,omitempty,omitzero"`
}

// CalicoConfigDataValue is the calico configuration written into the package's data values.
type CalicoConfigDataValue struct {
	// VethMTU is the MTU of pod interfaces; 0 means discovered.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default:=0
	VethMTU int64 `json:"vethMTU,omitempty"`

	// SkipCNIBinaries leaves the CNI plugin binaries already in the node image in place.
	// +optional
	// +kubebuilder:default:=false
	SkipCNIBinaries bool `json:"skipCNIBinaries,omitempty"`
}

// CalicoConfigStatus is the observed state of a CalicoConfig.
type CalicoConfigStatus struct {
	// SecretRef names the data-values Secret written from this object.
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
}

// CalicoConfig is the configuration of a cluster's calico package.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=calicoconfigs,shortName=calicoconf,scope=Namespaced
// +kubebuilder:printcolumn:name="VethMTU",type="integer",JSONPath=".spec.calico.config.vethMTU",description="MTU of pod interfaces; 0 means discovered"
// +kubebuilder:printcolumn:name="SecretRef",type="string",JSONPath=".status.secretRef",description="Name of the calico data values secret"
type CalicoConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CalicoConfigSpec   `json:"spec"`
	Status CalicoConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CalicoConfigList is a list of CalicoConfig.
type CalicoConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CalicoConfig `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &CalicoConfig{}, &CalicoConfigList{})
}
