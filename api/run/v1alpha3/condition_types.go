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

// Get returns the condition of the given type, or nil.
func (cs Conditions) Get(conditionType string) *Condition {
	for i := range cs {
		if cs[i].Type == conditionType {
			return &cs[i]
		}
	}
	return nil
}

// IsTrue reports whether the condition of the given type is True.
func (cs Conditions) IsTrue(conditionType string) bool {
	c := cs.Get(conditionType)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsFalse reports whether the condition of the given type is False.
func (cs Conditions) IsFalse(conditionType string) bool {
	c := cs.Get(conditionType)
	return c != nil && c.Status == corev1.ConditionFalse
}

// Set adds or replaces the condition of c's type. LastTransitionTime is kept while the status
// does not change, and set to now (or to c's, when given) when it does.
func (cs *Conditions) Set(c Condition) {
	if c.Status != corev1.ConditionFalse {
		c.Severity = ""
	}
	if old := cs.Get(c.Type); old != nil {
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		} else if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = metav1.Now()
		}
		*old = c
		return
	}
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = metav1.Now()
	}
	*cs = append(*cs, c)
}

// MarkTrue sets the condition of the given type True.
func (cs *Conditions) MarkTrue(conditionType string) {
	cs.Set(Condition{Type: conditionType, Status: corev1.ConditionTrue})
}

// MarkFalse sets the condition of the given type False, saying why.
func (cs *Conditions) MarkFalse(conditionType, reason string, severity ConditionSeverity, message string) {
	cs.Set(Condition{Type: conditionType, Status: corev1.ConditionFalse, Reason: reason, Severity: severity, Message: message})
}
