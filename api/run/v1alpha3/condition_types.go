package v1alpha3

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionSeverity classifies the reason of a condition whose status is False.
type ConditionSeverity string

const (
	// ConditionSeverityError means the condition is not met and needs attention.
	ConditionSeverityError ConditionSeverity = "Error"
	// ConditionSeverityWarning means the condition is not met but may fix itself.
	ConditionSeverityWarning ConditionSeverity = "Warning"
	// ConditionSeverityInfo means the condition is not met as part of normal progress.
	ConditionSeverityInfo ConditionSeverity = "Info"
)

// Condition is one observation of an object's state. TKG's run.tanzu.vmware.com objects report
// conditions in the shape of Cluster API's v1beta1 conditions (with severity), and slipway keeps
// that shape so that TKG clients read them unchanged.
type Condition struct {
	// Type of the condition in CamelCase, such as Ready or Compatible.
	// +required
	Type string `json:"type"`

	// Status of the condition: True, False or Unknown.
	// +required
	Status corev1.ConditionStatus `json:"status"`

	// Severity classifies the reason of a False condition. Set only when Status is False.
	// +optional
	Severity ConditionSeverity `json:"severity,omitempty"`

	// LastTransitionTime is when the condition last changed status.
	// +required
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`

	// Reason is a CamelCase word saying why the condition has its status.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Message says, for a person, why the condition has its status.
	// +optional
	Message string `json:"message,omitempty"`
}

// Conditions is a list of conditions, at most one of each type.
type Conditions []Condition
