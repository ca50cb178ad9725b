package propagation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// AnnotationSource marks a copy with its source, namespace/name. Only marked objects are updated
// or deleted: an object of the same name that someone else made is left alone.
const AnnotationSource = "propagation.slipway.dev/source"

// Reconciler propagates the objects of one configuration entry.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	config   *config
}

// Reasons of the Events users see.
const (
	// ReasonPropagated is a copy made in a namespace, on its source.
	ReasonPropagated = "Propagated"
	// ReasonNameTaken is a namespace where an object of the source's name that is not its copy
	// keeps the copy out, on the source.
	ReasonNameTaken = "NameTaken"
)

// SetupWithManager registers one controller per entry, and a readiness check that passes once
// every source has been propagated at least once, so that whoever waits for the controller to
// be ready finds the copies made.
func SetupWithManager(mgr ctrl.Manager, entries []Entry) error {
	var reconcilers []*Reconciler
	for _, e := range entries {
		c, err := prepare(e)
		if err != nil {
			return err
		}
		r := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("object-propagation-controller"), config: c}
		if err := r.setup(mgr); err != nil {
			return err
		}
		reconcilers = append(reconcilers, r)
	}
	var done atomic.Bool
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return nil
		}
		for _, r := range reconcilers {
			if err := r.propagateAll(ctx); err != nil {
				// Only the manager stopping ends the retries.
				return nil
			}
		}
		done.Store(true)
		return nil
	})); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("propagated", func(*http.Request) error {
		if !done.Load() {
			return errors.New("the first propagation has not finished")
		}
		return nil
	})
}

// propagateAll reconciles every source once, retrying while it fails.
func (r *Reconciler) propagateAll(ctx context.Context) error {
	return wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		requests, err := r.sources(ctx)
		if err != nil {
			ctrl.LoggerFrom(ctx).Info("Listing the sources failed, retrying", "kind", r.config.gvk.Kind, "reason", err.Error())
			return false, nil
		}
		for _, req := range requests {
			if _, err := r.Reconcile(ctx, req); err != nil {
				ctrl.LoggerFrom(ctx).Info("First propagation failed, retrying", "kind", r.config.gvk.Kind, "reason", err.Error())
				return false, nil
			}
		}
		return true, nil
	})
}

func (r *Reconciler) object() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.config.gvk)
	return u
}

func (r *Reconciler) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(r.object(), builder.WithPredicates(predicate.NewPredicateFuncs(r.isSource))).
		Watches(r.object(), handler.EnqueueRequestsFromMapFunc(r.sourceOfCopy)).
		// New namespaces, and namespaces whose labels change, may now be targets.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.allSources), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Named("propagation_" + strings.ToLower(r.config.gvk.Kind)).
		Complete(r)
}

func (r *Reconciler) isSource(o client.Object) bool {
	return o.GetNamespace() == r.config.Source.Namespace && r.config.selector.Matches(labels.Set(o.GetLabels()))
}

// sourceOfCopy maps a changed or deleted copy to its source, which puts it back.
func (r *Reconciler) sourceOfCopy(_ context.Context, o client.Object) []reconcile.Request {
	namespace, name, ok := strings.Cut(o.GetAnnotations()[AnnotationSource], "/")
	if !ok || namespace != r.config.Source.Namespace || o.GetNamespace() == namespace {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}}
}

// allSources maps a namespace that may now receive copies to every source.
func (r *Reconciler) allSources(ctx context.Context, ns client.Object) []reconcile.Request {
	if !ns.GetDeletionTimestamp().IsZero() || !r.config.targets.Matches(labels.Set(ns.GetLabels())) {
		return nil
	}
	requests, err := r.sources(ctx)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list the sources", "kind", r.config.gvk.Kind)
	}
	return requests
}

// sources lists the objects to propagate.
func (r *Reconciler) sources(ctx context.Context) ([]reconcile.Request, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(r.config.gvk.GroupVersion().WithKind(r.config.gvk.Kind + "List"))
	if err := r.Client.List(ctx, list, client.InNamespace(r.config.Source.Namespace), client.MatchingLabelsSelector{Selector: r.config.selector}); err != nil {
		return nil, err
	}
	requests := make([]reconcile.Request, 0, len(list.Items))
	for _, o := range list.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&o)})
	}
	return requests, nil
}

// Reconcile brings the copies of one source in every target namespace in step with it, or
// deletes them when the source is gone.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	source := r.object()
	if err := r.Client.Get(ctx, req.NamespacedName, source); apierrors.IsNotFound(err) {
		source = nil
	} else if err != nil {
		return ctrl.Result{}, err
	} else if !source.GetDeletionTimestamp().IsZero() || !r.isSource(source) {
		source = nil
	}
	namespaces := &corev1.NamespaceList{}
	if err := r.Client.List(ctx, namespaces, client.MatchingLabelsSelector{Selector: r.config.targets}); err != nil {
		return ctrl.Result{}, err
	}
	var errs []error
	for _, ns := range namespaces.Items {
		if ns.Name == req.Namespace || !ns.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.propagate(ctx, ns.Name, req.NamespacedName, source); err != nil {
			errs = append(errs, fmt.Errorf("namespace %s: %w", ns.Name, err))
		}
	}
	return ctrl.Result{}, kerrors.NewAggregate(errs)
}

// propagate makes the copy of source in namespace, or deletes it when source is nil.
func (r *Reconciler) propagate(ctx context.Context, namespace string, key types.NamespacedName, source *unstructured.Unstructured) error {
	log := ctrl.LoggerFrom(ctx).WithValues("namespace", namespace)
	current := r.object()
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: key.Name}, current)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	exists := err == nil
	ours := exists && current.GetAnnotations()[AnnotationSource] == key.String()
	switch {
	case source == nil:
		if !ours {
			return nil
		}
		log.Info("Deleting copy: its source is gone")
		return client.IgnoreNotFound(r.Client.Delete(ctx, current))
	case !exists:
		log.Info("Creating copy")
		copied := r.copyOf(source, namespace, nil)
		if err := r.Client.Create(ctx, copied); err != nil {
			return client.IgnoreAlreadyExists(err)
		}
		// The copy is the Event's related object: one Event per namespace, not a series.
		r.Recorder.Eventf(source, copied, corev1.EventTypeNormal, ReasonPropagated, "Copy", "Copied to namespace %s", namespace)
		return nil
	case !ours:
		log.Info("Not propagating: an object of this name that is not a copy exists")
		r.Recorder.Eventf(source, current, corev1.EventTypeWarning, ReasonNameTaken, "Copy",
			"Not copied to namespace %s: %s there is not a copy of this one; rename or delete it to receive the copy", namespace, klog.KObj(current))
		return nil
	}
	desired := r.copyOf(source, namespace, current)
	if reflect.DeepEqual(desired.Object, current.Object) {
		return nil
	}
	log.Info("Updating copy")
	return r.Client.Update(ctx, desired)
}

// copyOf returns source's copy for namespace: source's content, with the source namespace
// replaced when configured, and its labels and annotations, over the current copy's metadata
// and status. Labels and annotations others put on the copy are kept, as TKG's merge keeps them.
func (r *Reconciler) copyOf(source *unstructured.Unstructured, namespace string, current *unstructured.Unstructured) *unstructured.Unstructured {
	content := source.DeepCopy().Object
	delete(content, "metadata")
	delete(content, "status")
	if r.config.Target.DetectAndReplaceSourceNSRef {
		content = replaceStrings(content, r.config.Source.Namespace, namespace).(map[string]interface{})
	}
	out := r.object()
	if current != nil {
		out = current.DeepCopy()
		for k := range out.Object {
			if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
				delete(out.Object, k)
			}
		}
	} else {
		out.SetNamespace(namespace)
		out.SetName(source.GetName())
	}
	for k, v := range content {
		out.Object[k] = v
	}
	if l := merge(out.GetLabels(), own(source.GetLabels())); len(l) > 0 {
		out.SetLabels(l)
	}
	annotations := merge(out.GetAnnotations(), own(source.GetAnnotations()))
	annotations[AnnotationSource] = source.GetNamespace() + "/" + source.GetName()
	out.SetAnnotations(annotations)
	return out
}

// own drops the labels and annotations kapp puts on what it deploys: a copy is not part of the
// source's app.
func own(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if !strings.HasPrefix(k, "kapp.k14s.io/") {
			out[k] = v
		}
	}
	return out
}

// merge returns base with over's entries set.
func merge(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// replaceStrings returns v with every string equal to old replaced by new.
func replaceStrings(v interface{}, old, new string) interface{} {
	switch t := v.(type) {
	case string:
		if t == old {
			return new
		}
	case map[string]interface{}:
		for k, e := range t {
			t[k] = replaceStrings(e, old, new)
		}
	case []interface{}:
		for i, e := range t {
			t[i] = replaceStrings(e, old, new)
		}
	}
	return v
}
