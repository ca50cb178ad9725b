package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FeatureReference names a Feature and the activation a FeatureGate asks for it.
type FeatureReference struct {
	// Name is the Feature's name.
	// +kubebuilder:validation:Required
	Name string `json:"name"`
	// Activate is the activation asked for.
	Activate bool `json:"activate,omitempty"`
	// PermanentlyVoidAllSupportGuarantees accepts that toggling a Feature whose stability voids
	// the warranty voids this environment's support. Once true it cannot be set back to false.
	PermanentlyVoidAllSupportGuarantees bool `json:"permanentlyVoidAllSupportGuarantees,omitempty"`
}

// FeatureGateSpec is the activation an operator asks for a set of Features.
type FeatureGateSpec struct {
	// Features are the Features this gate controls; a Feature is controlled by one gate at most.
	// +listType=map
	// +listMapKey=name
	Features []FeatureReference `json:"features,omitempty"`
}

// FeatureReferenceStatus is the outcome of one FeatureReference.
type FeatureReferenceStatus string

// The outcomes of a FeatureReference.
const (
	// AppliedReferenceStatus means the Feature has the activation asked for.
	AppliedReferenceStatus FeatureReferenceStatus = "Applied"
	// InvalidReferenceStatus means the Feature is missing or its policy forbids the activation
	// asked for; the Feature keeps its default.
	InvalidReferenceStatus FeatureReferenceStatus = "Invalid"
)

// FeatureReferenceResult is the outcome of one FeatureReference.
type FeatureReferenceResult struct {
	// Name is the Feature's name.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Status is Applied or Invalid.
	// +kubebuilder:validation:Enum=Applied;Invalid
	Status FeatureReferenceStatus `json:"status"`
	// Message says why, for Invalid.
	// +optional
	Message string `json:"message,omitempty"`
}

// FeatureGateStatus is a FeatureGate's observed state.
type FeatureGateStatus struct {
	// FeatureReferenceResults holds the outcome of each Feature in the spec.
	// +listType=map
	// +listMapKey=name
	FeatureReferenceResults []FeatureReferenceResult `json:"featureReferenceResults"`
}

// FeatureGate is an operator's intent to activate or deactivate Features.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
type FeatureGate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FeatureGateSpec   `json:"spec,omitempty"`
	Status FeatureGateStatus `json:"status,omitempty"`
}

// FeatureGateList is a list of FeatureGates.
//
// +kubebuilder:object:root=true
type FeatureGateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FeatureGate `json:"items"`
}
