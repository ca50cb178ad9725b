package deploy

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func object(kind, name string, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	if kind == "CustomResourceDefinition" {
		u.SetAPIVersion("apiextensions.k8s.io/v1")
	}
	u.SetKind(kind)
	u.SetName(name)
	u.SetAnnotations(annotations)
	return u
}

func TestOrderFollowsChangeRules(t *testing.T) {
	objs := []*unstructured.Unstructured{
		object("ConfigMap", "gate", map[string]string{
			"kapp.k14s.io/change-rule.0": "upsert after upserting example.com/deployment",
			"kapp.k14s.io/change-rule.1": "delete before deleting example.com/deployment",
		}),
		object("ConfigMap", "deployment", map[string]string{"kapp.k14s.io/change-group": "example.com/deployment"}),
		object("CustomResourceDefinition", "crd", nil),
		object("ConfigMap", "first", map[string]string{"kapp.k14s.io/change-rule": "upsert before upserting example.com/deployment"}),
		object("ConfigMap", "free", nil),
	}
	for _, tc := range []struct {
		action       string
		waves, waits [][]int
	}{
		// The CRD first; then what has no rule; then the deployment, after "first"; then the gate.
		{"upsert", [][]int{{2}, {3, 4}, {1}, {0}}, [][]int{nil, {2}, {3}, {1}}},
		// The gate before the deployment; the CRD last.
		{"delete", [][]int{{0, 3, 4}, {1}, {2}}, [][]int{nil, {0}, {1, 3, 4}}},
	} {
		waves, waits, err := order(objs, tc.action)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(waves, tc.waves) || !reflect.DeepEqual(waits, tc.waits) {
			t.Errorf("%s: waves %v waits %v, want %v and %v", tc.action, waves, waits, tc.waves, tc.waits)
		}
	}
}

func TestOrderRefusesBadRulesAndCycles(t *testing.T) {
	_, _, err := order([]*unstructured.Unstructured{object("ConfigMap", "a", map[string]string{"kapp.k14s.io/change-rule": "upsert later"})}, "upsert")
	if err == nil || !strings.Contains(err.Error(), `ConfigMap a: annotation kapp.k14s.io/change-rule value "upsert later" is not a change rule`) {
		t.Errorf("bad rule: %v", err)
	}
	_, _, err = order([]*unstructured.Unstructured{
		object("ConfigMap", "a", map[string]string{"kapp.k14s.io/change-group": "a", "kapp.k14s.io/change-rule": "upsert after upserting b"}),
		object("ConfigMap", "b", map[string]string{"kapp.k14s.io/change-group": "b", "kapp.k14s.io/change-rule": "upsert after upserting a"}),
	}, "upsert")
	if err == nil || !strings.Contains(err.Error(), "the change rules of ConfigMap a, ConfigMap b form a cycle") {
		t.Errorf("cycle: %v", err)
	}
}
