package app_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kappMeta is kapp's app metadata as kapp v0.64.0 reads it (pkg/kapp/app/app_meta.go): the
// test decodes records with it the way the kapp CLI does.
type kappMeta struct {
	LabelKey       string `json:"labelKey"`
	LabelValue     string `json:"labelValue"`
	LastChangeName string `json:"lastChangeName"`
	LastChange     struct {
		Successful  *bool  `json:"successful"`
		Description string `json:"description"`
	} `json:"lastChange"`
	UsedGVs []schema.GroupVersion `json:"usedGVs"`
	UsedGKs *[]schema.GroupKind   `json:"usedGKs"`
}

func readRecord(t *testing.T, ns, name string) (*corev1.ConfigMap, kappMeta) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		t.Fatalf("record %s: %v", name, err)
	}
	var m kappMeta
	if err := json.Unmarshal([]byte(cm.Data["spec"]), &m); err != nil {
		t.Fatalf("record %s is not kapp's app metadata: %v: %s", name, err, cm.Data["spec"])
	}
	return cm, m
}

func changeRecords(t *testing.T, ns, labelValue string) []corev1.ConfigMap {
	t.Helper()
	list := &corev1.ConfigMapList{}
	if err := env.Client.List(t.Context(), list, client.InNamespace(ns),
		client.MatchingLabels{"kapp.k14s.io/is-app-change": "", "kapp.k14s.io/app-change-app-label": labelValue}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestAppRecordIsKapps checks that what slipway records is what kapp reads: the record
// <app>.app, as kapp-controller v0.50 names it, its metadata, the objects' labels and the change
// records.
func TestAppRecordIsKapps(t *testing.T) {
	ctx := t.Context()
	namespace(t, "app-record")
	a := inlineApp("app-record", "recorded", "")
	if err := env.Client.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(a)
	eventually(t, "ReconcileSucceeded", condition(env.Client, key, kappctrlv1alpha1.ReconcileSucceeded))
	record, meta := readRecord(t, "app-record", "recorded.app")
	if _, ok := record.Labels["kapp.k14s.io/is-app"]; !ok {
		t.Errorf("record labels %v: kapp lists apps by kapp.k14s.io/is-app", record.Labels)
	}
	if _, ok := record.Annotations["kapp.k14s.io/app-changes-use-app-label"]; !ok {
		t.Errorf("record annotations %v", record.Annotations)
	}
	if meta.LabelKey != "kapp.k14s.io/app" || meta.LabelValue == "" || meta.UsedGKs == nil ||
		fmt.Sprint(*meta.UsedGKs) != "[ConfigMap]" || fmt.Sprint(meta.UsedGVs) != "[v1]" {
		t.Errorf("record metadata %+v", meta)
	}
	_ = env.Client.Get(ctx, key, a)
	if want := "kapp.k14s.io/app=" + meta.LabelValue; a.Status.Deploy.KappDeployStatus.AssociatedResources.Label != want {
		t.Errorf("status label %q, want %q", a.Status.Deploy.KappDeployStatus.AssociatedResources.Label, want)
	}
	one := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "app-record", Name: "one"}, one); err != nil {
		t.Fatal(err)
	}
	// kapp's association label: v1. and the MD5 of namespace/group/kind/name.
	if one.Labels["kapp.k14s.io/app"] != meta.LabelValue || one.Labels["kapp.k14s.io/association"] != "v1.8f7048f14df59daa0f3c1e396a42ca45" {
		t.Errorf("object labels %v", one.Labels)
	}
	// kapp's identity annotation: without it kapp takes the object for a controller's.
	if got := one.Annotations["kapp.k14s.io/identity"]; got != "v1;app-record//ConfigMap/one;v1" {
		t.Errorf("identity annotation %q", got)
	}
	changes := changeRecords(t, "app-record", meta.LabelValue)
	if len(changes) != 1 || meta.LastChangeName != changes[0].Name || meta.LastChange.Successful == nil || !*meta.LastChange.Successful ||
		!strings.HasPrefix(meta.LastChange.Description, "update: Op: 1 create, 0 delete, 0 update, 0 noop") ||
		changes[0].Labels["kapp.k14s.io/app-change-app"] != "recorded.app" || !strings.HasPrefix(changes[0].Name, "recorded.app-change-") {
		t.Fatalf("change records %v, last change %q %+v", changes, meta.LastChangeName, meta.LastChange)
	}

	t.Run("a deploy that changes nothing records no change", func(t *testing.T) {
		_ = env.Client.Get(ctx, key, a)
		a.Spec.SyncPeriod = &metav1.Duration{Duration: 31e9}
		if err := env.Client.Update(ctx, a); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the new generation reconciled", func() error {
			got := &kappctrlv1alpha1.App{}
			if err := env.Client.Get(ctx, key, got); err != nil {
				return err
			}
			if got.Status.ObservedGeneration != got.Generation {
				return fmt.Errorf("observed generation %d of %d", got.Status.ObservedGeneration, got.Generation)
			}
			return nil
		})
		if changes := changeRecords(t, "app-record", meta.LabelValue); len(changes) != 1 {
			t.Fatalf("%d change records after a deploy that changed nothing", len(changes))
		}
	})

	t.Run("delete removes the record and its changes", func(t *testing.T) {
		if err := env.Client.Delete(ctx, a); err != nil {
			t.Fatal(err)
		}
		eventually(t, "record gone", func() error {
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "app-record", Name: "recorded.app"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("record still there: %v", err)
			}
			if n := len(changeRecords(t, "app-record", meta.LabelValue)); n != 0 {
				return fmt.Errorf("%d change records left", n)
			}
			return nil
		})
	})
}

// TestAppTakesOverKappsRecord meets a record and an object written by kapp itself (the shape
// kapp v0.64.0 writes for `kapp deploy -a adopted-ctrl`, the name kapp-controller gave an App's
// kapp app before v0.4x): the App moves the record to adopted.app, updates the object in place,
// keeps kapp's label, and deleting the App removes it.
func TestAppTakesOverKappsRecord(t *testing.T) {
	ctx := t.Context()
	namespace(t, "app-adopt")
	for _, obj := range []client.Object{
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "app-adopt", Name: "adopted-ctrl",
				Labels:      map[string]string{"kapp.k14s.io/is-app": ""},
				Annotations: map[string]string{"kapp.k14s.io/app-changes-use-app-label": ""}},
			Data: map[string]string{"spec": `{"labelKey":"kapp.k14s.io/app","labelValue":"1764000000000000000","lastChangeName":"adopted-ctrl-change-abcde","lastChange":{"startedAt":"2026-11-24T10:00:00Z","finishedAt":"2026-11-24T10:00:01Z","successful":true,"description":"update: Op: 1 create, 0 delete, 0 update, 0 noop, 0 exists / Wait to: 1 reconcile, 0 delete, 0 noop","namespaces":["app-adopt"]},"usedGVs":[{"Group":"","Version":"v1"}],"usedGKs":[{"Group":"","Kind":"ConfigMap"}]}`},
		},
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "app-adopt", Name: "one", Labels: map[string]string{
				"kapp.k14s.io/app": "1764000000000000000", "kapp.k14s.io/association": "v1.b827e5c5f15d155482f1e59314a713ba",
			}, Annotations: map[string]string{"kapp.k14s.io/identity": "v1;app-adopt//ConfigMap/one;v1"}},
			Data: map[string]string{"greeting": "from kapp"},
		},
	} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	before := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "app-adopt", Name: "one"}, before); err != nil {
		t.Fatal(err)
	}
	a := inlineApp("app-adopt", "adopted", "")
	if err := env.Client.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ReconcileSucceeded", condition(env.Client, client.ObjectKeyFromObject(a), kappctrlv1alpha1.ReconcileSucceeded))
	after := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "app-adopt", Name: "one"}, after); err != nil {
		t.Fatal(err)
	}
	if after.UID != before.UID || after.Data["greeting"] != "hello" || after.Labels["kapp.k14s.io/app"] != "1764000000000000000" {
		t.Fatalf("the object was not taken over in place: uid %s→%s, data %v, labels %v", before.UID, after.UID, after.Data, after.Labels)
	}
	// The record moved to kapp-controller v0.50's name, as kapp deploy --prev-app moves it.
	_, meta := readRecord(t, "app-adopt", "adopted.app")
	if meta.LabelValue != "1764000000000000000" || !strings.Contains(meta.LastChange.Description, "1 update") {
		t.Fatalf("record after the take-over: %+v", meta)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "app-adopt", Name: "adopted-ctrl"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("the record under its previous name is still there: %v", err)
	}
	if err := env.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	eventually(t, "object and record gone", func() error {
		for _, name := range []string{"one", "adopted.app"} {
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "app-adopt", Name: name}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("ConfigMap %s still there: %v", name, err)
			}
		}
		return nil
	})
}

// TestAppCorruptRecordSaysWhereAndNeverBlocksDelete gives an App a record that is not kapp's
// metadata: the failure names the ConfigMap and the way out, and the App can still be deleted.
func TestAppCorruptRecordSaysWhereAndNeverBlocksDelete(t *testing.T) {
	ctx := t.Context()
	namespace(t, "app-corrupt")
	if err := env.Client.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app-corrupt", Name: "broken-ctrl", Labels: map[string]string{"kapp.k14s.io/is-app": ""}},
		Data:       map[string]string{"spec": `[{"kind":"ConfigMap","name":"one"}]`},
	}); err != nil {
		t.Fatal(err)
	}
	a := inlineApp("app-corrupt", "broken", "")
	if err := env.Client.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(a)
	eventually(t, "ReconcileFailed", condition(env.Client, key, kappctrlv1alpha1.ReconcileFailed))
	_ = env.Client.Get(ctx, key, a)
	if msg := a.Status.UsefulErrorMessage; !strings.Contains(msg, "ConfigMap app-corrupt/broken-ctrl") ||
		!strings.Contains(msg, "kubectl delete configmap -n app-corrupt broken-ctrl") {
		t.Fatalf("the failure does not say where and how out: %q", msg)
	}
	if err := env.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	eventually(t, "App and record gone", func() error {
		if err := env.Client.Get(ctx, key, &kappctrlv1alpha1.App{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("App still there: %v", err)
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "app-corrupt", Name: "broken-ctrl"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("record still there: %v", err)
		}
		return nil
	})
}
