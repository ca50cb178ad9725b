package featuregates

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	corev1alpha2 "github.com/slipway-dev/slipway/api/core/v1alpha2"
)

// Reasons of the Events users see.
const (
	// ReasonActivated and ReasonDeactivated are a Feature's activation changing.
	ReasonActivated   = "Activated"
	ReasonDeactivated = "Deactivated"
	// ReasonInvalidReference is a FeatureGate reference newly refused.
	ReasonInvalidReference = "InvalidReference"
)

// FeatureReconciler sets each Feature's status.activated.
type FeatureReconciler struct {
	Client client.Client
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller; a FeatureGate change revisits every Feature, since
// a reference may have been added or removed.
func (r *FeatureReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("feature-controller")
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1alpha2.Feature{}).
		Watches(&corev1alpha2.FeatureGate{}, handler.EnqueueRequestsFromMapFunc(all(r.Client, func() client.ObjectList { return &corev1alpha2.FeatureList{} }))).
		Named("feature").
		Complete(r)
}

// Reconcile computes one Feature's activation.
func (r *FeatureReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	feature := &corev1alpha2.Feature{}
	if err := r.Client.Get(ctx, req.NamespacedName, feature); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	gates := &corev1alpha2.FeatureGateList{}
	if err := r.Client.List(ctx, gates); err != nil {
		return ctrl.Result{}, err
	}
	ref, gate := referenceTo(gates.Items, feature.Name)
	activated, _ := evaluate(feature, ref)
	if feature.Status.Activated == activated {
		return ctrl.Result{}, nil
	}
	feature.Status.Activated = activated
	ctrl.LoggerFrom(ctx).Info("Feature activation changed", "activated", activated)
	if err := r.Client.Status().Update(ctx, feature); err != nil {
		return ctrl.Result{}, err
	}
	reason, by := ReasonDeactivated, "by its stability's default"
	if activated {
		reason = ReasonActivated
	}
	// The gate that decided is the Event's related object; a nil interface when none did.
	var related runtime.Object
	if ref != nil && ref.Activate == activated {
		related, by = gate, "by FeatureGate "+gate.Name
	}
	r.Recorder.Eventf(feature, related, corev1.EventTypeNormal, reason, "Toggle", "Feature %s %s %s", feature.Name, activation(activated), by)
	return ctrl.Result{}, nil
}

// referenceTo returns the reference to a Feature in the first gate, by name, that has one, and
// that gate. The webhook lets one gate reference a Feature; the order settles what was made
// without it.
func referenceTo(gates []corev1alpha2.FeatureGate, feature string) (*corev1alpha2.FeatureReference, *corev1alpha2.FeatureGate) {
	sort.Slice(gates, func(i, j int) bool { return gates[i].Name < gates[j].Name })
	for gi := range gates {
		g := &gates[gi]
		for i := range g.Spec.Features {
			if g.Spec.Features[i].Name == feature {
				return &g.Spec.Features[i], g
			}
		}
	}
	return nil, nil
}

// FeatureGateReconciler reports the outcome of each of a FeatureGate's references.
type FeatureGateReconciler struct {
	Client client.Client
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller; a Feature change revisits every FeatureGate.
func (r *FeatureGateReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("featuregate-controller")
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1alpha2.FeatureGate{}).
		Watches(&corev1alpha2.Feature{}, handler.EnqueueRequestsFromMapFunc(all(r.Client, func() client.ObjectList { return &corev1alpha2.FeatureGateList{} }))).
		Named("featuregate").
		Complete(r)
}

// all returns a map function that requests every object of a list's kind: Features and gates
// are few, and a change of one may change any of the other.
func all(c client.Client, newList func() client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := newList()
		if err := c.List(ctx, list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Failed to list", "kind", fmt.Sprintf("%T", list))
			return nil
		}
		objs, err := meta.ExtractList(list)
		if err != nil {
			return nil
		}
		requests := make([]reconcile.Request, 0, len(objs))
		for _, o := range objs {
			if obj, ok := o.(client.Object); ok {
				requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
			}
		}
		return requests
	}
}

// Reconcile writes one FeatureGate's featureReferenceResults.
func (r *FeatureGateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	gate := &corev1alpha2.FeatureGate{}
	if err := r.Client.Get(ctx, req.NamespacedName, gate); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	features, err := featuresByName(ctx, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	results := []corev1alpha2.FeatureReferenceResult{}
	for i := range gate.Spec.Features {
		ref := &gate.Spec.Features[i]
		_, result := evaluate(features[ref.Name], ref)
		results = append(results, result)
	}
	if reflect.DeepEqual(gate.Status.FeatureReferenceResults, results) {
		return ctrl.Result{}, nil
	}
	before := map[string]corev1alpha2.FeatureReferenceResult{}
	for _, res := range gate.Status.FeatureReferenceResults {
		before[res.Name] = res
	}
	gate.Status.FeatureReferenceResults = results
	if err := r.Client.Status().Update(ctx, gate); err != nil {
		return ctrl.Result{}, err
	}
	// The references newly refused are one Warning, once (Events of one object and reason are
	// a series, which keeps the first note): the status says them as long as they last.
	var refused []string
	for _, res := range results {
		if res.Status == corev1alpha2.InvalidReferenceStatus && before[res.Name] != res {
			refused = append(refused, res.Name+": "+res.Message)
		}
	}
	if len(refused) > 0 {
		r.Recorder.Eventf(gate, nil, corev1.EventTypeWarning, ReasonInvalidReference, "Evaluate", "%s", strings.Join(refused, "; "))
	}
	return ctrl.Result{}, nil
}

func featuresByName(ctx context.Context, c client.Reader) (map[string]*corev1alpha2.Feature, error) {
	list := &corev1alpha2.FeatureList{}
	if err := c.List(ctx, list); err != nil {
		return nil, err
	}
	byName := make(map[string]*corev1alpha2.Feature, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	return byName, nil
}
