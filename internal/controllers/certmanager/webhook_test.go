package certmanager

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestValidate(t *testing.T) {
	obj := func(kind string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": kind, "spec": spec}}
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"certificate", obj("Certificate", map[string]any{"secretName": "s", "issuerRef": map[string]any{"name": "i"}}), ""},
		{"no secretName", obj("Certificate", map[string]any{"issuerRef": map[string]any{"name": "i"}}), "spec.secretName: Required value"},
		{"no issuer", obj("Certificate", map[string]any{"secretName": "s"}), "spec.issuerRef.name: Required value"},
		{"bad duration", obj("Certificate", map[string]any{"secretName": "s", "issuerRef": map[string]any{"name": "i"}, "duration": "90 days"}), "spec.duration: Invalid value"},
		{"selfSigned", obj("Issuer", map[string]any{"selfSigned": map[string]any{}}), ""},
		{"two types", obj("ClusterIssuer", map[string]any{"selfSigned": map[string]any{}, "ca": map[string]any{"secretName": "x"}}), "exactly one type"},
		{"ca without secret", obj("Issuer", map[string]any{"ca": map[string]any{}}), "spec.ca.secretName: Required value"},
	} {
		err := validate(tc.obj)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: want %q, got %v", tc.name, tc.want, err)
		}
	}
}
