// Package deploy is the last stage of an App, what kapp does for kapp-controller: it applies the
// templated objects with server-side apply (Namespaces and CRDs first, then in the order of kapp's
// change groups and change rules), records them in an inventory ConfigMap, prunes what a new
// revision drops, waits for workloads to be ready, and deletes everything it applied.
package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Labels and names kapp uses.
const (
	// LabelApp marks every object an App deployed.
	LabelApp = "kapp.k14s.io/app"
	// inventorySuffix names the inventory ConfigMap: <app>-ctrl, as kapp-controller names its
	// kapp app.
	inventorySuffix = "-ctrl"
	inventoryKey    = "spec"
	fieldManager    = "kapp"
)

// Target is where an App deploys.
type Target struct {
	// Client reaches the cluster: the App's own, through its service account, or another one
	// through spec.cluster.kubeconfigSecretRef.
	Client client.Client
	// Namespace receives namespaced objects that name none, and the inventory.
	Namespace string
}

// Result says what a deploy touched, for the App's status.
type Result struct {
	Label      string
	Namespaces []string
	GroupKinds []metav1.GroupKind
}

// ref identifies one deployed object.
type ref struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

func refOf(u *unstructured.Unstructured) ref {
	return ref{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

func (r ref) object() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(r.APIVersion)
	u.SetKind(r.Kind)
	u.SetNamespace(r.Namespace)
	u.SetName(r.Name)
	return u
}

func (r ref) String() string {
	if r.Namespace == "" {
		return fmt.Sprintf("%s %s", r.Kind, r.Name)
	}
	return fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name)
}

// Parse reads a YAML stream into objects.
func Parse(manifests []byte) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := decoder.Decode(&u.Object); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("templated output is not YAML: %w", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("templated output has an object without kind or name: %v", u.Object)
		}
		objs = append(objs, u)
	}
}

// rank orders changes as kapp's default change rules do: Namespaces and CRDs before what uses
// them.
func rank(u *unstructured.Unstructured) int {
	switch u.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Kind: "Namespace"}:
		return 0
	case schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
		return 1
	}
	return 2
}

// Apply deploys the objects as app, prunes what the previous revision had and this one does not,
// and waits up to waitTimeout for them to be ready. Objects go in the order of kapp's change
// rules: one that is to be upserted after a change group waits for the group to be ready.
func Apply(ctx context.Context, t Target, app, appID string, objs []*unstructured.Unstructured, waitTimeout time.Duration) (Result, error) {
	waves, waits, err := order(objs, "upsert")
	if err != nil {
		return Result{}, err
	}
	previous, err := readInventory(ctx, t, app)
	if err != nil {
		return Result{}, err
	}
	var applied []ref
	for w, wave := range waves {
		if err := waitReady(ctx, t.Client, pick(objs, waits[w]), waitTimeout); err != nil {
			return Result{}, err
		}
		sort.SliceStable(wave, func(i, j int) bool { return rank(objs[wave[i]]) < rank(objs[wave[j]]) })
		for _, obj := range pick(objs, wave) {
			if err := t.prepare(obj, appID); err != nil {
				return Result{}, err
			}
			applied = append(applied, refOf(obj))
		}
		// Record the wave before applying it, so that a failure part-way still lets delete
		// find what was applied; delete skips what was recorded and never made.
		if err := writeInventory(ctx, t, app, union(previous, applied)); err != nil {
			return Result{}, err
		}
		for _, obj := range pick(objs, wave) {
			if err := t.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
				return Result{}, fmt.Errorf("failed to apply %s: %w", refOf(obj), err)
			}
		}
	}
	if err := prune(ctx, t.Client, previous, applied); err != nil {
		return Result{}, err
	}
	if err := writeInventory(ctx, t, app, applied); err != nil {
		return Result{}, err
	}
	if err := waitReady(ctx, t.Client, objs, waitTimeout); err != nil {
		return Result{}, err
	}
	return result(appID, objs), nil
}

// prepare places a namespaced object without a namespace in the target namespace and labels it.
func (t Target) prepare(obj *unstructured.Unstructured, appID string) error {
	namespaced, err := t.Client.IsObjectNamespaced(obj)
	if err != nil {
		return fmt.Errorf("failed to find the kind of %s: %w", refOf(obj), err)
	}
	if namespaced && obj.GetNamespace() == "" {
		obj.SetNamespace(t.Namespace)
	}
	if !namespaced {
		obj.SetNamespace("")
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelApp] = appID
	obj.SetLabels(labels)
	return nil
}

func result(appID string, objs []*unstructured.Unstructured) Result {
	r := Result{Label: LabelApp + "=" + appID}
	namespaces, kinds := map[string]bool{}, map[metav1.GroupKind]bool{}
	for _, o := range objs {
		if o.GetNamespace() != "" {
			namespaces[o.GetNamespace()] = true
		}
		gk := o.GroupVersionKind().GroupKind()
		kinds[metav1.GroupKind{Group: gk.Group, Kind: gk.Kind}] = true
	}
	for ns := range namespaces {
		r.Namespaces = append(r.Namespaces, ns)
	}
	sort.Strings(r.Namespaces)
	for gk := range kinds {
		r.GroupKinds = append(r.GroupKinds, gk)
	}
	sort.Slice(r.GroupKinds, func(i, j int) bool {
		return r.GroupKinds[i].Group+"/"+r.GroupKinds[i].Kind < r.GroupKinds[j].Group+"/"+r.GroupKinds[j].Kind
	})
	return r
}

func union(a, b []ref) []ref {
	seen := map[ref]bool{}
	var out []ref
	for _, r := range append(append([]ref{}, a...), b...) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// prune deletes what previous had and applied does not.
func prune(ctx context.Context, c client.Client, previous, applied []ref) error {
	keep := map[ref]bool{}
	for _, r := range applied {
		keep[r] = true
	}
	var errs []error
	for _, r := range previous {
		if keep[r] {
			continue
		}
		if err := c.Delete(ctx, r.object(), client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) && !isNoMatch(err) {
			errs = append(errs, fmt.Errorf("failed to prune %s: %w", r, err))
		}
	}
	return errors.Join(errs...)
}

func isNoMatch(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "no matches for kind") || apierrors.IsNotFound(err))
}

// Delete removes everything the app deployed, what depends on CRDs and Namespaces first and in
// the order of the objects' kapp delete rules, and waits up to timeout for it to be gone.
func Delete(ctx context.Context, t Target, app string, timeout time.Duration) error {
	refs, err := readInventory(ctx, t, app)
	if err != nil {
		return err
	}
	// The live objects carry the change rules.
	objs := make([]*unstructured.Unstructured, 0, len(refs))
	for _, r := range refs {
		live := r.object()
		if err := t.Client.Get(ctx, client.ObjectKeyFromObject(live), live); isNoMatch(err) {
			continue
		} else if err != nil {
			return fmt.Errorf("failed to read %s: %w", r, err)
		}
		objs = append(objs, live)
	}
	waves, waits, err := order(objs, "delete")
	if err != nil {
		return err
	}
	for w, wave := range waves {
		if err := waitGone(ctx, t.Client, pick(objs, waits[w]), timeout); err != nil {
			return err
		}
		var errs []error
		for _, o := range pick(objs, wave) {
			if err := t.Client.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !isNoMatch(err) {
				errs = append(errs, fmt.Errorf("failed to delete %s: %w", refOf(o), err))
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
	if err := waitGone(ctx, t.Client, objs, timeout); err != nil {
		return err
	}
	return client.IgnoreNotFound(t.Client.Delete(ctx, inventory(t, app)))
}

// Forget drops the inventory and leaves the objects, for noopDelete.
func Forget(ctx context.Context, t Target, app string) error {
	return client.IgnoreNotFound(t.Client.Delete(ctx, inventory(t, app)))
}

func inventory(t Target, app string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: app + inventorySuffix}}
}

func readInventory(ctx context.Context, t Target, app string) ([]ref, error) {
	cm := inventory(t, app)
	if err := t.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("failed to read the inventory of %s: %w", app, err)
	}
	var refs []ref
	if err := json.Unmarshal([]byte(cm.Data[inventoryKey]), &refs); err != nil {
		return nil, fmt.Errorf("inventory ConfigMap %s/%s is corrupt: %w", cm.Namespace, cm.Name, err)
	}
	return refs, nil
}

func writeInventory(ctx context.Context, t Target, app string, refs []ref) error {
	data, err := json.Marshal(refs)
	if err != nil {
		return err
	}
	cm := inventory(t, app)
	cm.Labels = map[string]string{"kapp.k14s.io/is-app": ""}
	cm.Data = map[string]string{inventoryKey: string(data)}
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	u, err := toUnstructured(cm)
	if err != nil {
		return err
	}
	if err := t.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("failed to write the inventory of %s: %w", app, err)
	}
	return nil
}

func toUnstructured(obj interface{}) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &u.Object); err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}
