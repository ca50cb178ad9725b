package capabilities_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha1 "github.com/slipway-dev/slipway/api/run/v1alpha1"
	"github.com/slipway-dev/slipway/internal/controllers/capabilities"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		e.StartManager(func(mgr ctrl.Manager) error {
			return (&capabilities.Reconciler{Client: mgr.GetClient(), Config: mgr.GetConfig()}).SetupWithManager(mgr)
		})
	}))
}

// results waits until a Capability has results and returns them by "query/question".
func results(t *testing.T, key client.ObjectKey) map[string]runv1alpha1.QueryResult {
	t.Helper()
	out := map[string]runv1alpha1.QueryResult{}
	envtest.Eventually(t, 30*time.Second, "results of "+key.String(), func() error {
		c := &runv1alpha1.Capability{}
		if err := env.Client.Get(t.Context(), key, c); err != nil {
			return err
		}
		if len(c.Status.Results) == 0 {
			return fmt.Errorf("no results yet")
		}
		for _, r := range c.Status.Results {
			for _, list := range [][]runv1alpha1.QueryResult{r.GroupVersionResources, r.Objects, r.PartialSchemas} {
				for _, q := range list {
					out[r.Name+"/"+q.Name] = q
				}
			}
		}
		return nil
	})
	return out
}

// TestQueriesRunWithTheServiceAccountsPermissions asks every kind of question as a service
// account that may read ConfigMaps in its namespace and nothing else.
func TestQueriesRunWithTheServiceAccountsPermissions(t *testing.T) {
	ctx := t.Context()
	ns := "capabilities-test"
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "reader"}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cluster-metadata", Annotations: map[string]string{"tkg.tanzu.vmware.com/edition": "tkg"}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hidden"}},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cm := corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "cluster-metadata"}
	capability := &runv1alpha1.Capability{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tkg"},
		Spec: runv1alpha1.CapabilitySpec{ServiceAccountName: "reader", Queries: []runv1alpha1.Query{{
			Name: "q",
			GroupVersionResources: []runv1alpha1.QueryGVR{
				{Name: "configmaps", Group: "core", Versions: []string{"v1"}, Resource: "configmaps"},
				{Name: "capabilities", Group: "run.tanzu.vmware.com", Versions: []string{"v1alpha1"}, Resource: "capabilities"},
				{Name: "no-group", Group: "nope.example.com"},
				{Name: "no-version", Group: "run.tanzu.vmware.com", Versions: []string{"v9"}},
				{Name: "no-resource", Group: "run.tanzu.vmware.com", Versions: []string{"v1alpha3"}, Resource: "nopes"},
				{Name: "resource-without-version", Group: "run.tanzu.vmware.com", Resource: "capabilities"},
			},
			Objects: []runv1alpha1.QueryObject{
				{Name: "with", ObjectReference: cm, WithAnnotations: map[string]string{"tkg.tanzu.vmware.com/edition": "tkg"}},
				{Name: "with-other-value", ObjectReference: cm, WithAnnotations: map[string]string{"tkg.tanzu.vmware.com/edition": "tce"}},
				{Name: "without", ObjectReference: cm, WithoutAnnotations: map[string]string{"tkg.tanzu.vmware.com/edition": ""}},
				{Name: "missing", ObjectReference: corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "nope"}},
				{Name: "forbidden", ObjectReference: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: ns, Name: "hidden"}},
			},
			PartialSchemas: []runv1alpha1.QueryPartialSchema{
				{Name: "capability-spec", PartialSchema: "properties:\n  spec:\n    properties:\n      serviceAccountName:\n        type: string\n"},
				{Name: "absent", PartialSchema: `{"properties": {"spec": {"properties": {"noSuchField": {"type": "string"}}}}}`},
			},
		}}},
	}
	if err := env.Client.Create(ctx, capability); err != nil {
		t.Fatal(err)
	}
	got := results(t, client.ObjectKeyFromObject(capability))
	for name, want := range map[string]string{
		"q/configmaps":               "found",
		"q/capabilities":             "found",
		"q/no-group":                 `not found: API group "nope.example.com" is not served`,
		"q/no-version":               "not found: version v9",
		"q/no-resource":              "not found: resource nopes",
		"q/resource-without-version": "error: resource \"capabilities\" needs at least one version",
		"q/with":                     "found",
		"q/with-other-value":         "not found: ConfigMap capabilities-test/cluster-metadata has no annotation tkg.tanzu.vmware.com/edition=tce",
		"q/without":                  "not found: ConfigMap capabilities-test/cluster-metadata has annotation",
		"q/missing":                  "not found: ConfigMap capabilities-test/nope does not exist",
		"q/forbidden":                `error: secrets "hidden" is forbidden: User "system:serviceaccount:capabilities-test:reader"`,
		"q/capability-spec":          "found",
		"q/absent":                   "not found: no definition",
	} {
		r, ok := got[name]
		var have string
		switch {
		case !ok:
			have = "no result"
		case r.Found:
			have = "found"
		case r.Error:
			have = "error: " + r.ErrorDetail
		default:
			have = "not found: " + r.NotFoundReason
		}
		if !strings.HasPrefix(have, want) {
			t.Errorf("%s: %s, want %s…", name, have, want)
		}
	}
	// Answered, the Capability's status is written no more when the controller looks again (an
	// annotation brings it back) and finds the same answers.
	patch := client.MergeFrom(capability.DeepCopy())
	capability.Annotations = map[string]string{"example.com/touched": "yes"}
	if err := env.Client.Patch(ctx, capability, patch); err != nil {
		t.Fatal(err)
	}
	envtest.ExpectStill(t, 3*time.Second, envtest.On(env.Client, capability.DeepCopy()))
}

// TestMissingServiceAccount gives every question the reason, naming the field.
func TestMissingServiceAccount(t *testing.T) {
	ctx := t.Context()
	capability := &runv1alpha1.Capability{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "no-sa"},
		Spec: runv1alpha1.CapabilitySpec{ServiceAccountName: "nobody", Queries: []runv1alpha1.Query{{
			Name:                  "q",
			GroupVersionResources: []runv1alpha1.QueryGVR{{Name: "core", Group: "core"}},
		}}},
	}
	if err := env.Client.Create(ctx, capability); err != nil {
		t.Fatal(err)
	}
	r := results(t, client.ObjectKeyFromObject(capability))["q/core"]
	if r.Found || !r.Error || !strings.Contains(r.ErrorDetail, "spec.serviceAccountName") || !strings.Contains(r.ErrorDetail, "default/nobody") {
		t.Errorf("result %+v, want an error naming spec.serviceAccountName and default/nobody", r)
	}
	// The reason is a Warning Event on the Capability too.
	envtest.Eventually(t, 10*time.Second, "the QueriesNotAsked Event", func() error {
		list := &eventsv1.EventList{}
		if err := env.Client.List(ctx, list, client.InNamespace("default")); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == capabilities.ReasonQueriesNotAsked && e.Regarding.Name == "no-sa" && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Note, "spec.serviceAccountName: service account default/nobody") {
				return nil
			}
		}
		return fmt.Errorf("no QueriesNotAsked Event of no-sa among %d", len(list.Items))
	})
}
