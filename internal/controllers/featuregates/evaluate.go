package featuregates

import (
	"fmt"

	corev1alpha2 "github.com/slipway-dev/slipway/api/core/v1alpha2"
)

// Messages of a FeatureReferenceResult.
const (
	messageApplied = "Feature has been successfully toggled"
	messageMissing = "Feature does not exist in cluster"
)

// evaluate returns a Feature's activation under a FeatureGate reference (nil when no gate
// references it) and the reference's outcome. A reference the Feature's policy forbids, or to a
// Feature that does not exist (feature nil), is Invalid and leaves the default activation.
func evaluate(feature *corev1alpha2.Feature, ref *corev1alpha2.FeatureReference) (bool, corev1alpha2.FeatureReferenceResult) {
	var result corev1alpha2.FeatureReferenceResult
	if ref != nil {
		result.Name = ref.Name
	}
	if feature == nil {
		result.Status, result.Message = corev1alpha2.InvalidReferenceStatus, messageMissing
		return false, result
	}
	policy := corev1alpha2.Policies[feature.Spec.Stability]
	if ref == nil {
		return policy.DefaultActivation, result
	}
	if reason := forbidden(feature, *ref); reason != "" {
		result.Status, result.Message = corev1alpha2.InvalidReferenceStatus, reason
		return policy.DefaultActivation, result
	}
	result.Status, result.Message = corev1alpha2.AppliedReferenceStatus, messageApplied
	return ref.Activate, result
}

// forbidden says why a Feature's policy forbids the activation a reference asks for, or "" when
// it allows it.
func forbidden(feature *corev1alpha2.Feature, ref corev1alpha2.FeatureReference) string {
	policy := corev1alpha2.Policies[feature.Spec.Stability]
	if ref.Activate == policy.DefaultActivation {
		return ""
	}
	switch {
	case policy.Immutable:
		return fmt.Sprintf("Feature %s could not be toggled because it is immutable: its stability %q keeps it %s; "+
			"set activate to %t or remove it from the FeatureGate", feature.Name, feature.Spec.Stability, activation(policy.DefaultActivation), policy.DefaultActivation)
	case policy.VoidsWarranty && !ref.PermanentlyVoidAllSupportGuarantees:
		return fmt.Sprintf("The stability level of feature %s (%q) indicates that it should not be activated in production environments. "+
			"To activate the feature, you must agree to permanently void all support guarantees for this environment by setting "+
			"permanentlyVoidAllSupportGuarantees to true", feature.Name, feature.Spec.Stability)
	}
	return ""
}

func activation(activated bool) string {
	if activated {
		return "activated"
	}
	return "deactivated"
}
