package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StabilityLevel is how ready a Feature is; its Policy follows from it.
type StabilityLevel string

// The stability levels, as TKG names them.
const (
	// WorkInProgress is not ready for use by anyone but its developers; it is not discoverable.
	WorkInProgress StabilityLevel = "Work In Progress"
	// Experimental may be used in pre-production; activating it voids the environment's support.
	Experimental StabilityLevel = "Experimental"
	// TechnicalPreview is unsupported but believed safe; activating it keeps support.
	TechnicalPreview StabilityLevel = "Technical Preview"
	// Stable is ready and supported; it is always activated.
	Stable StabilityLevel = "Stable"
	// Deprecated is destined for removal; it is activated by default and may be deactivated.
	Deprecated StabilityLevel = "Deprecated"
)

// FeatureSpec describes a Feature.
type FeatureSpec struct {
	// Description says what the Feature does.
	Description string `json:"description"`
	// Stability is the Feature's stability level: Work In Progress, Experimental, Technical
	// Preview, Stable or Deprecated.
	// +kubebuilder:validation:Enum=Work In Progress;Experimental;Technical Preview;Stable;Deprecated
	Stability StabilityLevel `json:"stability"`
}

// FeatureStatus is a Feature's observed state.
type FeatureStatus struct {
	// Activated says whether the Feature is activated: its policy's default, or what the
	// FeatureGate that references it asks when its policy allows.
	Activated bool `json:"activated"`
}

// Feature is a capability that code may gate.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=.spec.description
// +kubebuilder:printcolumn:name="Stability",type=string,JSONPath=.spec.stability
// +kubebuilder:printcolumn:name="Activated?",type=string,JSONPath=.status.activated
type Feature struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FeatureSpec   `json:"spec,omitempty"`
	Status FeatureStatus `json:"status,omitempty"`
}

// FeatureList is a list of Features.
//
// +kubebuilder:object:root=true
type FeatureList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Feature `json:"items"`
}

// Policy is what a stability level allows.
type Policy struct {
	// DefaultActivation is the activation of a Feature no FeatureGate references.
	DefaultActivation bool
	// Immutable Features cannot be toggled away from their default.
	Immutable bool
	// VoidsWarranty says that toggling the Feature away from its default voids the
	// environment's support, which a FeatureGate must accept with
	// permanentlyVoidAllSupportGuarantees.
	VoidsWarranty bool
	// Discoverable Features are listed to users.
	Discoverable bool
}

// Policies holds the policy of each stability level.
var Policies = map[StabilityLevel]Policy{
	WorkInProgress:   {DefaultActivation: false, Immutable: false, VoidsWarranty: true, Discoverable: false},
	Experimental:     {DefaultActivation: false, Immutable: false, VoidsWarranty: true, Discoverable: true},
	TechnicalPreview: {DefaultActivation: false, Immutable: false, VoidsWarranty: false, Discoverable: true},
	Stable:           {DefaultActivation: true, Immutable: true, VoidsWarranty: false, Discoverable: true},
	Deprecated:       {DefaultActivation: true, Immutable: false, VoidsWarranty: false, Discoverable: true},
}
