// Package deploy is the last stage of an App, what kapp does for kapp-controller: it applies the
// templated objects with server-side apply (Namespaces and CRDs first, then in the order of kapp's
// change groups and change rules), labels them and records the app and its changes in kapp's own
// format (so the kapp CLI reads them, and slipway takes over what kapp deployed), prunes what a
// new revision drops, waits for workloads to be ready, and deletes everything it applied.
package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Labels and names kapp uses.
const (
	// LabelApp marks every object an App deployed, with the label value of its kapp record.
	LabelApp     = "kapp.k14s.io/app"
	fieldManager = "kapp"
)

// Name is a kapp app's name, which names its record ConfigMap, and the name kapp-controller gave
// it before, which a deploy renames as `kapp deploy --prev-app` does.
type Name struct {
	App, Previous string
}

// AppName is the kapp app of an App: <name>.app, formerly <name>-ctrl, as kapp-controller v0.50
// names them.
func AppName(name string) Name { return Name{App: name + ".app", Previous: name + "-ctrl"} }

// RepositoryName is the kapp app of a PackageRepository: <name>.pkgr, formerly <name>-ctrl.
func RepositoryName(name string) Name { return Name{App: name + ".pkgr", Previous: name + "-ctrl"} }

// Target is where an App deploys.
type Target struct {
	// Client reaches the cluster: the App's own, through its service account, or another one
	// through spec.cluster.kubeconfigSecretRef.
	Client client.Client
	// Namespace receives namespaced objects that name none, and the record.
	Namespace string
}

// Result says what a deploy touched, for the App's status: the objects' label, their namespaces
// and kinds.
type Result struct {
	Label      string
	Namespaces []string
	GroupKinds []metav1.GroupKind
}

// ResultOf is what an App's or PackageRepository's deploy status says the last deploy touched.
func ResultOf(d *kappctrlv1alpha1.AppStatusDeploy) Result {
	if d == nil || d.KappDeployStatus == nil {
		return Result{}
	}
	r := d.KappDeployStatus.AssociatedResources
	return Result{Label: r.Label, Namespaces: r.Namespaces, GroupKinds: r.GroupKinds}
}

// ref identifies one object across API versions, as kapp's unique resource key does.
type ref struct {
	Group, Kind, Namespace, Name string
}

func refOf(u *unstructured.Unstructured) ref {
	gvk := u.GroupVersionKind()
	return ref{Group: gvk.Group, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
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

// Apply deploys the objects as the kapp app name, prunes what the app had and this revision does
// not, and waits up to waitTimeout for them to be ready. Objects go in the order of kapp's change
// rules: one that is to be upserted after a change group waits for the group to be ready. What it
// returns names the objects even when it fails part-way. The app's record is kapp's: an existing
// one, kapp's own included, is taken over with its label, so the same objects are updated in
// place; a change is recorded as kapp records one.
func Apply(ctx context.Context, t Target, name Name, objs []*unstructured.Unstructured, waitTimeout time.Duration) (res Result, err error) {
	waves, waits, err := order(objs, "upsert")
	if err != nil {
		return Result{}, err
	}
	rec, err := readRecord(ctx, t, name, true)
	if err != nil {
		return Result{}, err
	}
	// Objects are placed and labelled wave by wave, as their kinds come to exist; until then
	// what they say of their namespaces names the app's.
	res = result(rec.label(), objs)
	existing, err := owned(ctx, t, rec, rec.kinds(objs), res.Namespaces)
	if err != nil {
		return res, err
	}
	versions := map[ref]string{}
	for _, e := range existing {
		versions[refOf(e)] = e.GetResourceVersion()
	}

	// The change is recorded as kapp records it: when something was created, updated or
	// deleted, or the deploy failed part-way.
	change := changeMeta{StartedAt: time.Now().UTC()}
	var created, updated, unchanged, deleted int
	defer func() {
		if created+updated+deleted == 0 {
			return
		}
		change.Namespaces = res.Namespaces
		change.FinishedAt = time.Now().UTC()
		ok := err == nil
		change.Successful = &ok
		change.Description = fmt.Sprintf(changeDescriptionFmt, created, deleted, updated, unchanged, len(objs))
		if rerr := recordChange(ctx, t, name.App, rec, change); rerr != nil && err == nil {
			err = rerr
		}
	}()

	// Record the kinds of both revisions before applying, so that a failure part-way still lets
	// a delete or the next deploy find every object.
	rec.useKinds(append(append([]*unstructured.Unstructured{}, existing...), objs...))
	if err := rec.write(ctx, t); err != nil {
		return res, err
	}
	for w, wave := range waves {
		if err := waitReady(ctx, t.Client, pick(objs, waits[w]), waitTimeout); err != nil {
			return res, err
		}
		sort.SliceStable(wave, func(i, j int) bool { return rank(objs[wave[i]]) < rank(objs[wave[j]]) })
		for _, obj := range pick(objs, wave) {
			if err := t.prepare(obj, rec); err != nil {
				return res, err
			}
			before, found := versions[refOf(obj)]
			if err := t.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
				return res, fmt.Errorf("failed to apply %s: %w", refOf(obj), err)
			}
			switch {
			case !found:
				created++
			case obj.GetResourceVersion() != before:
				updated++
			default:
				unchanged++
			}
		}
	}
	keep := map[ref]bool{}
	for _, o := range objs {
		keep[refOf(o)] = true
	}
	var prunable []*unstructured.Unstructured
	for _, e := range existing {
		if !keep[refOf(e)] && e.GetDeletionTimestamp() == nil {
			prunable = append(prunable, e)
		}
	}
	deleted = len(prunable)
	if err := prune(ctx, t.Client, prunable); err != nil {
		return res, err
	}
	res = result(rec.label(), objs)
	rec.useKinds(objs)
	if created+updated+deleted == 0 {
		if err := rec.write(ctx, t); err != nil {
			return res, err
		}
	}
	if err := waitReady(ctx, t.Client, objs, waitTimeout); err != nil {
		return res, err
	}
	return res, nil
}

// prepare places a namespaced object without a namespace in the target namespace and marks it
// as kapp does: the app's label, the object's association label, and kapp's identity annotation,
// without which kapp takes the object for one a controller made and leaves it to the cluster.
func (t Target) prepare(obj *unstructured.Unstructured, rec *record) error {
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
	labels[rec.meta.LabelKey] = rec.meta.LabelValue
	labels[labelAssociation] = associationValue(obj)
	obj.SetLabels(labels)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[annotationIdentity] = identityValue(obj)
	obj.SetAnnotations(annotations)
	return nil
}

func result(label string, objs []*unstructured.Unstructured) Result {
	r := Result{Label: label}
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

// prune deletes what the previous revision had and this one does not.
func prune(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	var errs []error
	for _, o := range objs {
		if err := c.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !isNoMatch(err) {
			errs = append(errs, fmt.Errorf("failed to prune %s: %w", refOf(o), err))
		}
	}
	return errors.Join(errs...)
}

func isNoMatch(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "no matches for kind") || apierrors.IsNotFound(err))
}

// Delete removes everything the app deployed, what depends on CRDs and Namespaces first and in
// the order of the objects' kapp delete rules, waits up to timeout for it to be gone, and drops
// the app's record. last is what the app's status says it deployed: with no record, or one that
// cannot be read, the objects are found by its label and kinds, and the record is dropped all
// the same, so that a broken record never keeps an App from being deleted.
func Delete(ctx context.Context, t Target, name Name, last Result, timeout time.Duration) error {
	rec, err := readRecord(ctx, t, name, false)
	var corrupt *CorruptRecordError
	switch {
	case errors.As(err, &corrupt):
		logf.FromContext(ctx).Info("Deleting by the label the status names, and dropping the record", "reason", err.Error(), "label", last.Label)
		rec = &record{cm: recordObject(t, corrupt.Name)}
		if !rec.fromResult(last) {
			return client.IgnoreNotFound(t.Client.Delete(ctx, rec.cm))
		}
		rec.exists = true
	case err != nil:
		return err
	case !rec.exists:
		if !rec.fromResult(last) {
			return nil
		}
		rec.exists = true
	}
	objs, err := owned(ctx, t, rec, rec.kinds(nil), last.Namespaces)
	if err != nil {
		return err
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
	return dropRecord(ctx, t, rec)
}

// Forget drops the app's record and change records and leaves the objects, for noopDelete.
func Forget(ctx context.Context, t Target, name Name) error {
	rec, err := readRecord(ctx, t, name, false)
	var corrupt *CorruptRecordError
	if errors.As(err, &corrupt) {
		return client.IgnoreNotFound(t.Client.Delete(ctx, recordObject(t, corrupt.Name)))
	} else if err != nil {
		return err
	}
	return dropRecord(ctx, t, rec)
}
