package featuregates

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	corev1alpha2 "github.com/slipway-dev/slipway/api/core/v1alpha2"
)

// WebhookPath is where the FeatureGate validating webhook is served, TKG's path.
const WebhookPath = "/validate-core-tanzu-vmware-com-v1alpha2-featuregate"

// FeatureGateValidator refuses a FeatureGate that references a Feature that does not exist or
// that another gate references, asks an activation the Feature's policy forbids, or takes back
// permanentlyVoidAllSupportGuarantees.
type FeatureGateValidator struct {
	Client client.Reader
}

var _ admission.Validator[*corev1alpha2.FeatureGate] = &FeatureGateValidator{}

// SetupWebhookWithManager registers the webhook at WebhookPath.
func (v *FeatureGateValidator) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &corev1alpha2.FeatureGate{}).
		WithValidator(v).
		WithValidatorCustomPath(WebhookPath).
		Complete()
}

var featuresPath = field.NewPath("spec", "features")

// ValidateCreate checks the gate's references.
func (v *FeatureGateValidator) ValidateCreate(ctx context.Context, gate *corev1alpha2.FeatureGate) (admission.Warnings, error) {
	errs, err := v.validate(ctx, gate)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return nil, invalid(gate, errs)
}

// ValidateUpdate checks the gate's references and that no Feature takes back
// permanentlyVoidAllSupportGuarantees.
func (v *FeatureGateValidator) ValidateUpdate(ctx context.Context, old, gate *corev1alpha2.FeatureGate) (admission.Warnings, error) {
	errs, err := v.validate(ctx, gate)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	voided := map[string]bool{}
	for _, ref := range old.Spec.Features {
		voided[ref.Name] = ref.PermanentlyVoidAllSupportGuarantees
	}
	for i, ref := range gate.Spec.Features {
		if voided[ref.Name] && !ref.PermanentlyVoidAllSupportGuarantees {
			errs = append(errs, field.Forbidden(featuresPath.Index(i).Child("permanentlyVoidAllSupportGuarantees"),
				fmt.Sprintf("feature %s voided this environment's support guarantees permanently: the field cannot be set back to false", ref.Name)))
		}
	}
	return nil, invalid(gate, errs)
}

// ValidateDelete allows every deletion: the Features go back to their defaults.
func (v *FeatureGateValidator) ValidateDelete(context.Context, *corev1alpha2.FeatureGate) (admission.Warnings, error) {
	return nil, nil
}

func (v *FeatureGateValidator) validate(ctx context.Context, gate *corev1alpha2.FeatureGate) (field.ErrorList, error) {
	features, err := featuresByName(ctx, v.Client)
	if err != nil {
		return nil, err
	}
	gates := &corev1alpha2.FeatureGateList{}
	if err := v.Client.List(ctx, gates); err != nil {
		return nil, err
	}
	gatedBy := map[string]string{}
	for _, g := range gates.Items {
		if g.Name == gate.Name {
			continue
		}
		for _, ref := range g.Spec.Features {
			gatedBy[ref.Name] = g.Name
		}
	}
	var errs field.ErrorList
	for i, ref := range gate.Spec.Features {
		path := featuresPath.Index(i)
		feature, ok := features[ref.Name]
		switch {
		case !ok:
			errs = append(errs, field.Invalid(path.Child("name"), ref.Name,
				"no Feature of this name exists in the cluster: create the Feature first, or remove the reference"))
		case gatedBy[ref.Name] != "":
			errs = append(errs, field.Invalid(path.Child("name"), ref.Name,
				"already gated by FeatureGate "+gatedBy[ref.Name]+": a Feature is gated by one FeatureGate; change it there, or remove it there first"))
		default:
			if reason := forbidden(feature, ref); reason != "" {
				errs = append(errs, field.Forbidden(path.Child("activate"), reason))
			}
		}
	}
	return errs, nil
}

func invalid(gate *corev1alpha2.FeatureGate, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(corev1alpha2.GroupVersion.WithKind("FeatureGate").GroupKind(), gate.Name, errs)
}
