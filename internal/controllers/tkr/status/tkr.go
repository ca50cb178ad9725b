package status

import (
	"context"
	"fmt"
	"maps"
	"slices"

	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/tkr"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/source"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Reasons of a release that is not Valid, as TKG names them.
const (
	ReasonTKRVersionMismatch              = "TKRVersionMismatch"
	ReasonMissingOSImage                  = "MissingOSImage"
	ReasonOSImageVersionMismatch          = "OSImageVersionMismatch"
	ReasonMissingBootstrapPackage         = "MissingBootstrapPackage"
	ReasonMissingClusterBootstrapTemplate = "MissingClusterBootstrapTemplate"
	// ReasonWaitingForCompatibility says a release's Compatible condition is not set yet.
	ReasonWaitingForCompatibility = "WaitingForCompatibility"
	// ReasonReleaseReady is the Event of a release that became Ready: clusters of it are
	// admitted. A release found not Valid has an Event of the reason it is not (a Warning).
	ReasonReleaseReady = "ReleaseReady"
)

// TKRReconciler labels a release, sets its Valid and Ready conditions, and labels OSImages.
type TKRReconciler struct {
	Client client.Client
	// Namespace holds the releases' ClusterBootstrapTemplates and bootstrap Packages.
	Namespace string
	// Recorder records an Event when a release becomes Ready or is found not Valid; the
	// manager's when nil.
	Recorder events.EventRecorder
}

// SetupWithManager registers the reconciler. A release changes validity when its OSImages,
// ClusterBootstrapTemplate or bootstrap Packages come or go.
func (r *TKRReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("tkr-status-controller")
	}
	all := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []ctrl.Request {
		return source.AllTKRs(ctx, r.Client)
	})
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("tkr_status").
		For(&runv1alpha3.TanzuKubernetesRelease{}).
		Watches(&runv1alpha3.OSImage{}, all).
		Watches(&runv1alpha3.ClusterBootstrapTemplate{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
			return []ctrl.Request{{NamespacedName: client.ObjectKey{Name: o.GetName()}}}
		})).
		// Only the Packages of the releases' namespace can make a release valid or not.
		Watches(&datapkgingv1alpha1.Package{}, all, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == r.Namespace
		}))).
		Complete(r); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("osimage_labels").For(&runv1alpha3.OSImage{}).Complete(reconcile.Func(r.reconcileOSImage))
}

// Reconcile sets the release's conditions, then its labels from them.
func (r *TKRReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	t := &runv1alpha3.TanzuKubernetesRelease{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	statusPatch := client.MergeFromWithOptions(t.DeepCopy(), client.MergeFromWithOptimisticLock{})
	wasReady := t.Status.Conditions.IsTrue(runv1alpha3.ConditionReady)
	var wasInvalid string
	if v := t.Status.Conditions.Get(runv1alpha3.ConditionValid); v != nil && v.Status == corev1.ConditionFalse {
		wasInvalid = v.Reason + ": " + v.Message
	}
	reason, message, err := r.validity(ctx, t)
	if err != nil {
		return ctrl.Result{}, err
	}
	if reason == "" {
		t.Status.Conditions.MarkTrue(runv1alpha3.ConditionValid)
	} else {
		t.Status.Conditions.MarkFalse(runv1alpha3.ConditionValid, reason, runv1alpha3.ConditionSeverityWarning, message)
	}
	setReady(t)
	if err := r.Client.Status().Patch(ctx, t, statusPatch); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch {
	case reason != "" && reason+": "+message != wasInvalid:
		r.Recorder.Eventf(t, nil, corev1.EventTypeWarning, reason, "Validate", "Release %s is not valid: %s", t.Spec.Version, message)
	case !wasReady && t.Status.Conditions.IsTrue(runv1alpha3.ConditionReady):
		r.Recorder.Eventf(t, nil, corev1.EventTypeNormal, ReasonReleaseReady, "Validate", "Release %s is Ready: clusters of it are admitted", t.Spec.Version)
	}
	return ctrl.Result{}, setLabels(ctx, r.Client, t, tkr.TKRLabels(t))
}

// setLabels writes an object's labels when they differ.
func setLabels(ctx context.Context, c client.Client, obj client.Object, labels map[string]string) error {
	if maps.Equal(labels, obj.GetLabels()) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	obj.SetLabels(labels)
	return client.IgnoreNotFound(c.Patch(ctx, obj, patch))
}

// setReady makes Ready the summary of Valid and Compatible: True when both are.
func setReady(t *runv1alpha3.TanzuKubernetesRelease) {
	cs := &t.Status.Conditions
	for _, c := range []string{runv1alpha3.ConditionValid, runv1alpha3.ConditionCompatible} {
		if cond := cs.Get(c); cond == nil {
			cs.MarkFalse(runv1alpha3.ConditionReady, ReasonWaitingForCompatibility, runv1alpha3.ConditionSeverityInfo, "the TKR source has not set Compatible yet")
			return
		} else if cond.Status != "True" {
			cs.MarkFalse(runv1alpha3.ConditionReady, cond.Reason, cond.Severity, fmt.Sprintf("%s: %s", c, cond.Message))
			return
		}
	}
	cs.MarkTrue(runv1alpha3.ConditionReady)
}

// validity checks the release as TKG does: its Kubernetes version prefixes its version, its
// OSImages exist with its Kubernetes version, its bootstrap Packages and its
// ClusterBootstrapTemplate exist. It returns the reason and message of the first failure.
func (r *TKRReconciler) validity(ctx context.Context, t *runv1alpha3.TanzuKubernetesRelease) (string, string, error) {
	k8s := t.Spec.Kubernetes.Version
	prefixes := tkg.VersionPrefixes(tkg.VersionLabel(t.Spec.Version))
	if !slices.Contains(prefixes, tkg.VersionLabel(k8s)) {
		return ReasonTKRVersionMismatch, fmt.Sprintf("Kubernetes version %q is not a prefix of TKR version %q", k8s, t.Spec.Version), nil
	}
	for _, ref := range t.Spec.OSImages {
		o := &runv1alpha3.OSImage{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: ref.Name}, o); err != nil {
			if apierrors.IsNotFound(err) {
				return ReasonMissingOSImage, fmt.Sprintf("OSImage %q is missing", ref.Name), nil
			}
			return "", "", err
		}
		if o.Spec.KubernetesVersion != k8s {
			return ReasonOSImageVersionMismatch, fmt.Sprintf("OSImage %q has Kubernetes version %q, not the TKR's %q", o.Name, o.Spec.KubernetesVersion, k8s), nil
		}
	}
	for _, ref := range t.Spec.BootstrapPackages {
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: ref.Name}, &datapkgingv1alpha1.Package{}); err != nil {
			if apierrors.IsNotFound(err) {
				return ReasonMissingBootstrapPackage, fmt.Sprintf("bootstrap Package %s/%s is missing", r.Namespace, ref.Name), nil
			}
			return "", "", err
		}
	}
	if _, legacy := t.Labels[runv1alpha3.LabelLegacyTKR]; !legacy {
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: t.Name}, &runv1alpha3.ClusterBootstrapTemplate{}); err != nil {
			if apierrors.IsNotFound(err) {
				return ReasonMissingClusterBootstrapTemplate, fmt.Sprintf("ClusterBootstrapTemplate %s/%s is missing", r.Namespace, t.Name), nil
			}
			return "", "", err
		}
	}
	return "", "", nil
}

func (r *TKRReconciler) reconcileOSImage(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o := &runv1alpha3.OSImage{}
	if err := r.Client.Get(ctx, req.NamespacedName, o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, setLabels(ctx, r.Client, o, tkr.OSImageLabels(o))
}
