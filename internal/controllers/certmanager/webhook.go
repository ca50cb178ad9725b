package certmanager

// The webhook: what cert-manager's validating webhook refuses of the objects slipway acts on.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// ValidatePath is where the webhook validates cert-manager.io objects.
const ValidatePath = "/validate"

// Validator refuses cert-manager.io objects slipway's cert-manager cannot act on, naming the
// field and the fix: a Certificate without secretName or issuerRef.name, or whose duration,
// renewBefore or renewBeforePercentage cert-manager refuses; an issuer of no or several types.
type Validator struct{}

// Handle validates one object.
func (Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(req.Object.Raw, &u.Object); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if errs := validate(u); len(errs) > 0 {
		return admission.Denied(errs.ToAggregate().Error())
	}
	return admission.Allowed("")
}

// validate checks a Certificate, Issuer or ClusterIssuer.
func validate(u *unstructured.Unstructured) field.ErrorList {
	specPath := field.NewPath("spec")
	switch u.GetKind() {
	case CertificateGVK.Kind:
		var spec certificateSpec
		if err := readField(u, "spec", &spec); err != nil {
			return field.ErrorList{field.Invalid(specPath, nil, err.Error())}
		}
		return validateCertificate(spec, specPath)
	case IssuerGVK.Kind, ClusterIssuerGVK.Kind:
		spec, _, _ := unstructured.NestedMap(u.Object, "spec")
		return validateIssuer(spec, specPath)
	}
	return nil
}

func validateCertificate(spec certificateSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.SecretName == "" {
		errs = append(errs, field.Required(path.Child("secretName"), "name the Secret the certificate is stored in"))
	}
	if spec.IssuerRef.Name == "" {
		errs = append(errs, field.Required(path.Child("issuerRef", "name"), "name the Issuer or ClusterIssuer that signs the certificate"))
	}
	return append(errs, validateDuration(spec, path)...)
}

// validateDuration refuses what cert-manager's webhook refuses of spec.duration,
// spec.renewBefore and spec.renewBeforePercentage: a duration under an hour, a renewBefore under
// five minutes or not less than the duration, both renewBefore and renewBeforePercentage, a
// percentage whose renewBefore would be refused.
func validateDuration(spec certificateSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	duration, err := spec.duration()
	if err != nil {
		return append(errs, field.Invalid(path.Child("duration"), spec.Duration, "use a Go duration such as 2160h"))
	}
	if duration < MinimumDuration {
		errs = append(errs, field.Invalid(path.Child("duration"), spec.Duration,
			fmt.Sprintf("certificate duration must be at least %s: lengthen it, or unset it for %s", MinimumDuration, DefaultDuration)))
	}
	if spec.RenewBefore != "" && spec.RenewBeforePercentage != nil {
		errs = append(errs, field.Forbidden(path.Child("renewBeforePercentage"), "renewBefore and renewBeforePercentage are mutually exclusive: unset one of them"))
	}
	if spec.RenewBefore != "" {
		renewBefore, err := time.ParseDuration(spec.RenewBefore)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(path.Child("renewBefore"), spec.RenewBefore, "use a Go duration such as 720h"))
		case renewBefore < MinimumRenewBefore:
			errs = append(errs, field.Invalid(path.Child("renewBefore"), spec.RenewBefore,
				fmt.Sprintf("certificate renewBefore must be at least %s: lengthen it, or unset it to renew two thirds into the certificate's life", MinimumRenewBefore)))
		case renewBefore >= duration:
			errs = append(errs, field.Invalid(path.Child("renewBefore"), spec.RenewBefore,
				fmt.Sprintf("certificate duration %s must be greater than renewBefore %s: shorten spec.renewBefore, lengthen spec.duration, or unset spec.renewBefore to renew two thirds into the certificate's life", duration, renewBefore)))
		}
	}
	if p := spec.RenewBeforePercentage; p != nil {
		renewBefore := time.Duration(float64(duration) * float64(*p) / 100)
		if *p <= 0 || *p >= 100 || renewBefore < MinimumRenewBefore {
			errs = append(errs, field.Invalid(path.Child("renewBeforePercentage"), *p,
				fmt.Sprintf("certificate renewBeforePercentage must be between 0 and 100, exclusive, and leave at least %s of the certificate's life before renewal", MinimumRenewBefore)))
		}
	}
	return errs
}

func validateIssuer(spec map[string]any, path *field.Path) field.ErrorList {
	var types []string
	for _, t := range []string{"selfSigned", "ca", "acme", "vault", "venafi"} {
		if _, ok := spec[t]; ok {
			types = append(types, t)
		}
	}
	const one = "an issuer has exactly one type: selfSigned, ca, acme, vault or venafi"
	switch {
	case len(types) == 0:
		return field.ErrorList{field.Required(path, one)}
	case len(types) > 1:
		return field.ErrorList{field.Invalid(path, strings.Join(types, ", "), fmt.Sprintf("%s; this one has %d", one, len(types)))}
	case types[0] == "ca":
		if name, _, _ := unstructured.NestedString(spec, "ca", "secretName"); name == "" {
			return field.ErrorList{field.Required(path.Child("ca", "secretName"), "name the Secret holding the CA's tls.crt and tls.key")}
		}
	}
	return nil
}
