package deploy

import (
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kapp's record of an app: the ConfigMap NAME labelled kapp.k14s.io/is-app, its metadata JSON
// under data.spec, and one ConfigMap per change. slipway writes them as kapp does, so that kapp
// reads what slipway deployed, and reads what kapp wrote, so that slipway takes over an app kapp
// or kapp-controller deployed.
const (
	labelIsApp = "kapp.k14s.io/is-app"
	// annotationChangesUseAppLabel says the app's change records are found by its label value,
	// as kapp marks every app it creates.
	annotationChangesUseAppLabel = "kapp.k14s.io/app-changes-use-app-label"
	// labelAssociation is kapp's per-object label: v1.<md5 of namespace/group/kind/name>.
	labelAssociation = "kapp.k14s.io/association"
	// annotationIdentity says kapp deployed the object: v1;<namespace/group/kind/name>;<apiVersion>.
	annotationIdentity   = "kapp.k14s.io/identity"
	labelIsChange        = "kapp.k14s.io/is-app-change"
	labelChangeAppLabel  = "kapp.k14s.io/app-change-app-label"
	labelChangeAppName   = "kapp.k14s.io/app-change-app"
	recordKey            = "spec"
	changesMaxToKeep     = 5
	changeNameSeparator  = "-change-"
	recordCorruptWayOut  = "delete it (kubectl delete configmap -n %s %s) and the next reconcile writes a new one, taking the objects over by their names"
	changeDescriptionFmt = "update: Op: %d create, %d delete, %d update, %d noop, 0 exists / Wait to: %d reconcile, 0 delete, 0 noop"
)

// appMeta is kapp's app metadata (kapp's app.Meta), field for field.
type appMeta struct {
	LabelKey       string                `json:"labelKey"`
	LabelValue     string                `json:"labelValue"`
	LastChangeName string                `json:"lastChangeName,omitempty"`
	LastChange     changeMeta            `json:"lastChange,omitempty"`
	UsedGVs        []schema.GroupVersion `json:"usedGVs,omitempty"`
	UsedGKs        *[]schema.GroupKind   `json:"usedGKs,omitempty"`
}

// changeMeta is kapp's record of one change (kapp's app.ChangeMeta).
type changeMeta struct {
	StartedAt   time.Time `json:"startedAt"`
	FinishedAt  time.Time `json:"finishedAt,omitempty"`
	Successful  *bool     `json:"successful,omitempty"`
	Description string    `json:"description,omitempty"`
	Namespaces  []string  `json:"namespaces,omitempty"`
}

// CorruptRecordError is a record ConfigMap whose data.spec is not kapp's app metadata.
type CorruptRecordError struct {
	Namespace, Name string
	Err             error
}

func (e *CorruptRecordError) Error() string {
	return fmt.Sprintf("the kapp record ConfigMap %s/%s does not hold kapp's app metadata under data.spec (%v): "+recordCorruptWayOut,
		e.Namespace, e.Name, e.Err, e.Namespace, e.Name)
}

func (e *CorruptRecordError) Unwrap() error { return e.Err }

// record is an app's record as read, or a new one.
type record struct {
	cm   *corev1.ConfigMap
	meta appMeta
	// exists says the ConfigMap is on the cluster.
	exists bool
}

func recordObject(t Target, app string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: app}}
}

// readRecord reads the app's record, under its name or, failing that, its previous one, which
// rename moves to the current name as kapp does; with neither, it starts a record whose label
// value is new, as kapp makes one.
func readRecord(ctx context.Context, t Target, name Name, rename bool) (*record, error) {
	cm := recordObject(t, name.App)
	err := t.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	if apierrors.IsNotFound(err) && name.Previous != "" {
		cm = recordObject(t, name.Previous)
		err = t.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	}
	if apierrors.IsNotFound(err) {
		return &record{cm: recordObject(t, name.App), meta: appMeta{
			LabelKey: LabelApp, LabelValue: strconv.FormatInt(time.Now().UTC().UnixNano(), 10), UsedGKs: &[]schema.GroupKind{},
		}}, nil
	} else if err != nil {
		return nil, fmt.Errorf("failed to read the kapp record %s: %w", klog.KObj(cm), err)
	}
	var m appMeta
	if err := json.Unmarshal([]byte(cm.Data[recordKey]), &m); err != nil {
		return nil, &CorruptRecordError{Namespace: cm.Namespace, Name: cm.Name, Err: err}
	}
	if m.LabelKey == "" || m.LabelValue == "" {
		return nil, &CorruptRecordError{Namespace: cm.Namespace, Name: cm.Name, Err: errors.New("labelKey or labelValue is empty")}
	}
	if errs := validation.IsQualifiedName(m.LabelKey); len(errs) > 0 {
		return nil, &CorruptRecordError{Namespace: cm.Namespace, Name: cm.Name, Err: fmt.Errorf("labelKey %q: %s", m.LabelKey, strings.Join(errs, "; "))}
	}
	if errs := validation.IsValidLabelValue(m.LabelValue); len(errs) > 0 {
		return nil, &CorruptRecordError{Namespace: cm.Namespace, Name: cm.Name, Err: fmt.Errorf("labelValue %q: %s", m.LabelValue, strings.Join(errs, "; "))}
	}
	if rename && cm.Name != name.App {
		moved := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: name.App, Labels: cm.Labels, Annotations: cm.Annotations}, Data: cm.Data}
		if err := t.Client.Create(ctx, moved); err != nil {
			return nil, fmt.Errorf("failed to move the kapp record %s to %s: %w", klog.KObj(cm), name.App, err)
		}
		if err := t.Client.Delete(ctx, cm); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("failed to delete the kapp record %s after moving it to %s: %w", klog.KObj(cm), name.App, err)
		}
		cm = moved
	}
	return &record{cm: cm, meta: m, exists: true}, nil
}

// fromResult takes the label, kinds and namespaces an App's status names, for an app whose
// record is gone or broken.
func (r *record) fromResult(last Result) bool {
	k, v, ok := strings.Cut(last.Label, "=")
	if !ok || k == "" || v == "" {
		return false
	}
	gks := make([]schema.GroupKind, 0, len(last.GroupKinds))
	for _, gk := range last.GroupKinds {
		gks = append(gks, schema.GroupKind{Group: gk.Group, Kind: gk.Kind})
	}
	r.meta = appMeta{LabelKey: k, LabelValue: v, UsedGKs: &gks, LastChange: changeMeta{Namespaces: last.Namespaces}}
	return true
}

// selector selects what the app deployed.
func (r *record) selector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{r.meta.LabelKey: r.meta.LabelValue})
}

func (r *record) label() string { return r.meta.LabelKey + "=" + r.meta.LabelValue }

// write saves the record: kapp's labels and annotation, and the metadata under data.spec. Labels
// and annotations others put on the ConfigMap are kept.
func (r *record) write(ctx context.Context, t Target) error {
	data, err := json.Marshal(r.meta)
	if err != nil {
		return err
	}
	cm := r.cm
	if !r.exists {
		cm.Labels = map[string]string{labelIsApp: ""}
		cm.Annotations = map[string]string{annotationChangesUseAppLabel: ""}
		cm.Data = map[string]string{recordKey: string(data)}
		if err := t.Client.Create(ctx, cm); err != nil {
			return fmt.Errorf("failed to create the kapp record %s: %w", klog.KObj(cm), err)
		}
		r.exists = true
		return nil
	}
	if cm.Data[recordKey] == string(data) {
		return nil
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[recordKey] = string(data)
	if err := t.Client.Update(ctx, cm); err != nil {
		return fmt.Errorf("failed to update the kapp record %s: %w", klog.KObj(cm), err)
	}
	return nil
}

// useKinds sets the group-versions and group-kinds the app's objects have, which is where kapp
// and slipway look for them.
func (r *record) useKinds(objs []*unstructured.Unstructured) {
	gvs, gks := map[schema.GroupVersion]bool{}, map[schema.GroupKind]bool{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		gvs[gvk.GroupVersion()] = true
		gks[gvk.GroupKind()] = true
	}
	r.meta.UsedGVs = r.meta.UsedGVs[:0:0]
	for gv := range gvs {
		r.meta.UsedGVs = append(r.meta.UsedGVs, gv)
	}
	sort.Slice(r.meta.UsedGVs, func(i, j int) bool {
		return r.meta.UsedGVs[i].Group+r.meta.UsedGVs[i].Version < r.meta.UsedGVs[j].Group+r.meta.UsedGVs[j].Version
	})
	used := make([]schema.GroupKind, 0, len(gks))
	for gk := range gks {
		used = append(used, gk)
	}
	sort.Slice(used, func(i, j int) bool { return used[i].Group+used[i].Kind < used[j].Group+used[j].Kind })
	r.meta.UsedGKs = &used
}

// kinds are the group-kinds to look for the app's objects in: the record's, or, for a record
// without them (kapp before group-kind scoping), those of its group-versions' objects named by
// the caller.
func (r *record) kinds(also []*unstructured.Unstructured) []schema.GroupKind {
	seen := map[schema.GroupKind]bool{}
	var out []schema.GroupKind
	add := func(gk schema.GroupKind) {
		if !seen[gk] {
			seen[gk] = true
			out = append(out, gk)
		}
	}
	if r.meta.UsedGKs != nil {
		for _, gk := range *r.meta.UsedGKs {
			add(gk)
		}
	}
	for _, o := range also {
		add(o.GroupVersionKind().GroupKind())
	}
	return out
}

// owned lists the objects the app deployed (labelled as the app's, and not controllers' copies of
// them), of the given kinds: across the cluster, or,
// where the target may not list across it, in the namespaces the app is known to use, as kapp
// falls back to.
func owned(ctx context.Context, t Target, r *record, gks []schema.GroupKind, namespaces []string) ([]*unstructured.Unstructured, error) {
	if !r.exists {
		return nil, nil
	}
	nsSet := map[string]bool{t.Namespace: true}
	for _, ns := range append(append([]string{}, r.meta.LastChange.Namespaces...), namespaces...) {
		if ns != "" {
			nsSet[ns] = true
		}
	}
	var out []*unstructured.Unstructured
	for _, gk := range gks {
		mapping, err := t.Client.RESTMapper().RESTMapping(gk)
		if meta.IsNoMatchError(err) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("failed to find the resource of %s: %w", gk, err)
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(mapping.GroupVersionKind.GroupVersion().WithKind(mapping.GroupVersionKind.Kind + "List"))
		err = t.Client.List(ctx, list, client.MatchingLabelsSelector{Selector: r.selector()})
		if apierrors.IsForbidden(err) && mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			list.Items = nil
			for ns := range nsSet {
				one := &unstructured.UnstructuredList{}
				one.SetGroupVersionKind(list.GroupVersionKind())
				if err = t.Client.List(ctx, one, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: r.selector()}); err != nil {
					break
				}
				list.Items = append(list.Items, one.Items...)
			}
		}
		if isNoMatch(err) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("failed to list the app's %s: %w", gk, err)
		}
		for i := range list.Items {
			if deployedByApp(&list.Items[i]) {
				out = append(out, &list.Items[i])
			}
		}
	}
	return out, nil
}

// deployedByApp says whether an object with the app's label is one the app deployed: its kapp
// identity annotation names the object itself. A copy a controller made of a deployed object
// carries the label and annotation of its source, as Cluster API's clones of a ClusterClass's
// templates do: kapp takes such an object for a transient one of the cluster's, and neither
// prunes nor deletes it, and nor does the app here.
func deployedByApp(u *unstructured.Unstructured) bool {
	pieces := strings.Split(u.GetAnnotations()[annotationIdentity], ";")
	return len(pieces) == 3 && pieces[0] == "v1" && pieces[1] == uniqueKey(u)
}

// uniqueKey is kapp's key of an object, which does not change with its API version.
func uniqueKey(u *unstructured.Unstructured) string {
	return u.GetNamespace() + "/" + u.GroupVersionKind().Group + "/" + u.GetKind() + "/" + u.GetName()
}

// associationValue is kapp's association label value for an object.
func associationValue(u *unstructured.Unstructured) string {
	return fmt.Sprintf("v1.%x", md5.Sum([]byte(uniqueKey(u))))
}

// identityValue is kapp's identity annotation value for an object.
func identityValue(u *unstructured.Unstructured) string {
	return "v1;" + uniqueKey(u) + ";" + u.GetAPIVersion()
}

// recordChange writes a change record as kapp does after a change, points the app's record at
// it, and drops the oldest beyond kapp-controller's five.
func recordChange(ctx context.Context, t Target, app string, r *record, c changeMeta) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: t.Namespace, GenerateName: app + changeNameSeparator,
		Labels: map[string]string{labelIsChange: "", labelChangeAppLabel: r.meta.LabelValue},
	}}
	if len(app) <= validation.LabelValueMaxLength {
		cm.Labels[labelChangeAppName] = app
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	cm.Data = map[string]string{recordKey: string(data)}
	if err := t.Client.Create(ctx, cm); err != nil {
		return fmt.Errorf("failed to record the change of %s: %w", app, err)
	}
	r.meta.LastChangeName, r.meta.LastChange = cm.Name, c
	if err := r.write(ctx, t); err != nil {
		return err
	}
	changes, err := changeRecords(ctx, t, r)
	if err != nil {
		return err
	}
	for i := 0; i < len(changes)-changesMaxToKeep; i++ {
		if err := t.Client.Delete(ctx, &changes[i]); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to drop an old change record of %s: %w", app, err)
		}
	}
	return nil
}

// changeRecords lists the app's change records, oldest first, found as kapp finds them: by the
// app's label value, or by its name for a record kapp made before it marked them so.
func changeRecords(ctx context.Context, t Target, r *record) ([]corev1.ConfigMap, error) {
	app := r.cm.Name
	sel := client.MatchingLabels{labelIsChange: "", labelChangeAppLabel: r.meta.LabelValue}
	if _, ok := r.cm.Annotations[annotationChangesUseAppLabel]; !ok && r.exists {
		sel = client.MatchingLabels{labelIsChange: "", labelChangeAppName: app}
	}
	list := &corev1.ConfigMapList{}
	if err := t.Client.List(ctx, list, client.InNamespace(t.Namespace), sel); err != nil {
		return nil, fmt.Errorf("failed to list the change records of %s: %w", app, err)
	}
	// Change records made in the same second are ordered by when the change started.
	started := func(cm *corev1.ConfigMap) time.Time {
		var c changeMeta
		if json.Unmarshal([]byte(cm.Data[recordKey]), &c) != nil || c.StartedAt.IsZero() {
			return cm.CreationTimestamp.Time
		}
		return c.StartedAt
	}
	sort.SliceStable(list.Items, func(i, j int) bool { return started(&list.Items[i]).Before(started(&list.Items[j])) })
	return list.Items, nil
}

// dropRecord deletes the app's change records and its record.
func dropRecord(ctx context.Context, t Target, r *record) error {
	if !r.exists {
		return nil
	}
	changes, err := changeRecords(ctx, t, r)
	if err != nil {
		return err
	}
	for i := range changes {
		if err := t.Client.Delete(ctx, &changes[i]); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete a change record of %s: %w", r.cm.Name, err)
		}
	}
	return client.IgnoreNotFound(t.Client.Delete(ctx, r.cm))
}
