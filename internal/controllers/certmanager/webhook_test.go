package certmanager

import (
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func object(kind string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": kind, "metadata": map[string]any{"name": "x"}, "spec": spec}}
}

// certificate is a valid Certificate's spec with the given fields added.
func certificate(fields map[string]any) *unstructured.Unstructured {
	spec := map[string]any{"secretName": "s", "issuerRef": map[string]any{"name": "i"}}
	for k, v := range fields {
		spec[k] = v
	}
	return object("Certificate", spec)
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		// want are substrings of the refusal, each naming the field; none means it is admitted.
		want []string
	}{
		{"certificate", certificate(nil), nil},
		{"no secretName", object("Certificate", map[string]any{"issuerRef": map[string]any{"name": "i"}}), []string{"spec.secretName: Required value"}},
		{"no issuer", object("Certificate", map[string]any{"secretName": "s"}), []string{"spec.issuerRef.name: Required value"}},
		{"bad duration", certificate(map[string]any{"duration": "90 days"}), []string{`spec.duration: Invalid value: "90 days"`}},
		{"short duration", certificate(map[string]any{"duration": "30m"}), []string{`spec.duration: Invalid value: "30m": certificate duration must be at least 1h0m0s`}},
		{"renewBefore", certificate(map[string]any{"duration": "2h", "renewBefore": "30m"}), nil},
		{"renewBefore of the default duration", certificate(map[string]any{"renewBefore": "720h"}), nil},
		{"renewBefore equal to duration", certificate(map[string]any{"duration": "2h", "renewBefore": "2h"}),
			[]string{`spec.renewBefore: Invalid value: "2h": certificate duration 2h0m0s must be greater than renewBefore 2h0m0s: shorten spec.renewBefore`}},
		{"renewBefore over the default duration", certificate(map[string]any{"renewBefore": "2200h"}),
			[]string{`spec.renewBefore: Invalid value: "2200h": certificate duration 2160h0m0s must be greater than renewBefore 2200h0m0s`}},
		{"short renewBefore", certificate(map[string]any{"renewBefore": "1m"}), []string{`spec.renewBefore: Invalid value: "1m": certificate renewBefore must be at least 5m0s`}},
		{"bad renewBefore", certificate(map[string]any{"renewBefore": "soon"}), []string{`spec.renewBefore: Invalid value: "soon"`}},
		{"renewBeforePercentage", certificate(map[string]any{"renewBeforePercentage": int64(25)}), nil},
		{"renewBeforePercentage of 100", certificate(map[string]any{"renewBeforePercentage": int64(100)}),
			[]string{"spec.renewBeforePercentage: Invalid value: 100: certificate renewBeforePercentage must be between 0 and 100"}},
		{"renewBeforePercentage of 0", certificate(map[string]any{"renewBeforePercentage": int64(0)}), []string{"spec.renewBeforePercentage: Invalid value: 0"}},
		{"renewBefore and renewBeforePercentage", certificate(map[string]any{"renewBefore": "720h", "renewBeforePercentage": int64(25)}),
			[]string{"spec.renewBeforePercentage: Forbidden: renewBefore and renewBeforePercentage are mutually exclusive"}},
		{"everything wrong", certificate(map[string]any{"secretName": "", "duration": "2h", "renewBefore": "3h"}),
			[]string{"spec.secretName: Required value", `spec.renewBefore: Invalid value: "3h"`}},
		{"selfSigned", object("Issuer", map[string]any{"selfSigned": map[string]any{}}), nil},
		{"ca", object("ClusterIssuer", map[string]any{"ca": map[string]any{"secretName": "x"}}), nil},
		{"no type", object("Issuer", map[string]any{}), []string{"spec: Required value: an issuer has exactly one type"}},
		{"two types", object("ClusterIssuer", map[string]any{"selfSigned": map[string]any{}, "ca": map[string]any{"secretName": "x"}}),
			[]string{`spec: Invalid value: "selfSigned, ca": an issuer has exactly one type`}},
		{"ca without secret", object("Issuer", map[string]any{"ca": map[string]any{}}), []string{"spec.ca.secretName: Required value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validate(tc.obj)
			if len(tc.want) == 0 {
				if len(errs) > 0 {
					t.Fatalf("refused: %v", errs.ToAggregate())
				}
				return
			}
			if len(errs) != len(tc.want) {
				t.Fatalf("want %d errors %q, got %v", len(tc.want), tc.want, errs.ToAggregate())
			}
			for i, want := range tc.want {
				if got := errs[i].Error(); !strings.Contains(got, want) {
					t.Errorf("error %d: want %q in %q", i, want, got)
				}
			}
		})
	}
}

func TestHandleDeniesWithTheField(t *testing.T) {
	raw, err := json.Marshal(certificate(map[string]any{"duration": "1h", "renewBefore": "1h"}).Object)
	if err != nil {
		t.Fatal(err)
	}
	resp := Validator{}.Handle(t.Context(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Object: runtime.RawExtension{Raw: raw}}})
	if resp.Allowed || !strings.Contains(resp.Result.Message, "spec.renewBefore: Invalid value") {
		t.Fatalf("want a denial naming spec.renewBefore, got allowed=%v %q", resp.Allowed, resp.Result.Message)
	}
}
