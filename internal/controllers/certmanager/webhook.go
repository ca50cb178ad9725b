package certmanager

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// ValidatePath is where the webhook validates cert-manager.io objects.
const ValidatePath = "/validate"

// Validator refuses cert-manager.io objects slipway's cert-manager cannot act on, with the field
// and the fix: a Certificate without secretName or issuerRef.name, an issuer of no or several
// types.
type Validator struct{}

// Handle validates one object.
func (Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(req.Object.Raw, &u.Object); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if err := validate(u); err != nil {
		return admission.Denied(err.Error())
	}
	return admission.Allowed("")
}

func validate(u *unstructured.Unstructured) error {
	switch u.GetKind() {
	case CertificateGVK.Kind:
		if name, _, _ := unstructured.NestedString(u.Object, "spec", "secretName"); name == "" {
			return fmt.Errorf("spec.secretName: Required value: name the Secret the certificate is stored in")
		}
		if name, _, _ := unstructured.NestedString(u.Object, "spec", "issuerRef", "name"); name == "" {
			return fmt.Errorf("spec.issuerRef.name: Required value: name the Issuer or ClusterIssuer that signs the certificate")
		}
		if d, ok, _ := unstructured.NestedString(u.Object, "spec", "duration"); ok {
			if _, err := time.ParseDuration(d); err != nil {
				return fmt.Errorf("spec.duration: Invalid value %q: use a Go duration such as 2160h", d)
			}
		}
	case IssuerGVK.Kind, ClusterIssuerGVK.Kind:
		spec, _, _ := unstructured.NestedMap(u.Object, "spec")
		var types []string
		for _, t := range []string{"selfSigned", "ca", "acme", "vault", "venafi"} {
			if _, ok := spec[t]; ok {
				types = append(types, t)
			}
		}
		if len(types) != 1 {
			return fmt.Errorf("spec: an issuer has exactly one type (selfSigned, ca, acme, vault or venafi); this one has %d %v", len(types), types)
		}
		if types[0] == "ca" {
			if name, _, _ := unstructured.NestedString(spec, "ca", "secretName"); name == "" {
				return fmt.Errorf("spec.ca.secretName: Required value: name the Secret holding the CA's tls.crt and tls.key")
			}
		}
	}
	return nil
}
