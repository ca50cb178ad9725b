package packageinstall

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"github.com/vmware-tanzu/carvel-vendir/pkg/vendir/versions"
	vendirversions "github.com/vmware-tanzu/carvel-vendir/pkg/vendir/versions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"sigs.k8s.io/cluster-api/util/finalizers"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/slipway-dev/slipway/internal/controllers/packaging/app"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Names kapp-controller gives.
const (
	// Finalizer holds a PackageInstall until its App, and what the App deployed, are gone.
	Finalizer = "finalizers.packageinstall.packaging.carvel.dev/delete"
	// AnnotationPackageRefName and AnnotationPackageVersion on the App say what it installs.
	AnnotationPackageRefName = "packaging.carvel.dev/package-ref-name"
	AnnotationPackageVersion = "packaging.carvel.dev/package-version"

	defaultSyncPeriod = 10 * time.Minute
)

// Reasons of the Events recorded on PackageInstalls.
const (
	ReasonReconcileSucceeded = "ReconcileSucceeded"
	ReasonReconcileFailed    = "ReconcileFailed"
)

// Reconciler reconciles PackageInstalls.
type Reconciler struct {
	Client client.Client
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
	// GlobalNamespace holds Packages visible from every namespace.
	GlobalNamespace string
}

// SetupWithManager registers the reconciler: PackageInstalls, their Apps, and Packages (a new
// version may now satisfy a constraint).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.GlobalNamespace == "" {
		r.GlobalNamespace = tkg.PackageRepoGlobalNamespace
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("kapp-controller")
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&pkgingv1alpha1.PackageInstall{}, builder.WithPredicates(predicate.Or(
			// Status writes of its own do not trigger another sync; syncPeriod does.
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Owns(&kappctrlv1alpha1.App{}).
		Watches(&datapkgingv1alpha1.Package{}, handler.EnqueueRequestsFromMapFunc(r.installsOfPackage)).
		Complete(r)
}

func (r *Reconciler) installsOfPackage(ctx context.Context, obj client.Object) []reconcile.Request {
	pkg, ok := obj.(*datapkgingv1alpha1.Package)
	if !ok {
		return nil
	}
	installs := &pkgingv1alpha1.PackageInstallList{}
	var opts []client.ListOption
	if pkg.Namespace != r.GlobalNamespace {
		opts = append(opts, client.InNamespace(pkg.Namespace))
	}
	if err := r.Client.List(ctx, installs, opts...); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, pi := range installs.Items {
		if pi.Spec.PackageRef != nil && pi.Spec.PackageRef.RefName == pkg.Spec.RefName {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&pi)})
		}
	}
	return reqs
}

// Reconcile resolves the package, keeps the App in line and reports its state.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	pi := &pkgingv1alpha1.PackageInstall{}
	if err := r.Client.Get(ctx, req.NamespacedName, pi); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("PackageInstall", klog.KObj(pi)))
	// Go on in the same pass once the finalizer is added: its own update does not trigger
	// another.
	if _, err := finalizers.EnsureFinalizer(ctx, r.Client, pi, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	status := *pi.Status.DeepCopy()
	defer func() {
		status.ObservedGeneration = pi.Generation
		if reflect.DeepEqual(status, pi.Status) {
			return
		}
		r.recordTransition(pi, pi.Status, status)
		patch := client.MergeFrom(pi.DeepCopy())
		pi.Status = status
		if err := r.Client.Status().Patch(ctx, pi, patch); err != nil && !apierrors.IsNotFound(err) {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()
	if !pi.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, pi, &status)
	}
	return r.reconcileNormal(ctx, pi, &status)
}

func (r *Reconciler) reconcileNormal(ctx context.Context, pi *pkgingv1alpha1.PackageInstall, status *pkgingv1alpha1.PackageInstallStatus) (ctrl.Result, error) {
	if pi.Spec.Canceled || pi.Spec.Paused {
		status.FriendlyDescription = "Canceled/paused"
		status.Conditions = nil
		return ctrl.Result{}, r.pauseApp(ctx, pi)
	}
	pkg, err := r.resolve(ctx, pi)
	if err != nil {
		fail(status, err)
		return ctrl.Result{RequeueAfter: syncPeriod(pi)}, nil
	}
	status.LastAttemptedVersion = pkg.Spec.Version
	app, err := r.ensureApp(ctx, pi, pkg)
	if err != nil {
		fail(status, err)
		return ctrl.Result{}, err
	}
	reportApp(status, app, pkg)
	return ctrl.Result{}, nil
}

// recordTransition records an Event when the PackageInstall starts to succeed, with the version
// installed, or to fail, with kapp-controller's useful error message.
func (r *Reconciler) recordTransition(pi *pkgingv1alpha1.PackageInstall, before, after pkgingv1alpha1.PackageInstallStatus) {
	was, is := trueCondition(before.Conditions), trueCondition(after.Conditions)
	switch {
	case is == was && (is != kappctrlv1alpha1.ReconcileSucceeded || before.Version == after.Version):
	case is == kappctrlv1alpha1.ReconcileSucceeded:
		r.Recorder.Eventf(pi, nil, corev1.EventTypeNormal, ReasonReconcileSucceeded, "Reconcile", "Installed package %s version %s",
			pi.Spec.PackageRef.RefName, after.Version)
	case is == kappctrlv1alpha1.ReconcileFailed:
		r.Recorder.Eventf(pi, nil, corev1.EventTypeWarning, ReasonReconcileFailed, "Reconcile", "%s", after.UsefulErrorMessage)
	}
}

// trueCondition is the type of the first condition that holds, or "".
func trueCondition(conds []kappctrlv1alpha1.Condition) kappctrlv1alpha1.ConditionType {
	for _, c := range conds {
		if c.Status == corev1.ConditionTrue {
			return c.Type
		}
	}
	return ""
}

func fail(status *pkgingv1alpha1.PackageInstallStatus, err error) {
	status.UsefulErrorMessage = err.Error()
	status.FriendlyDescription = "Reconcile failed: " + strings.SplitN(err.Error(), "\n", 2)[0]
	status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.ReconcileFailed, Status: corev1.ConditionTrue, Message: err.Error()}}
}

// reportApp copies the App's state, as kapp-controller does; the version counts as installed
// once the App reconciled it.
func reportApp(status *pkgingv1alpha1.PackageInstallStatus, app *kappctrlv1alpha1.App, pkg *datapkgingv1alpha1.Package) {
	if app.Status.ObservedGeneration != app.Generation || len(app.Status.Conditions) == 0 {
		status.FriendlyDescription = "Reconciling"
		status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.Reconciling, Status: corev1.ConditionTrue}}
		return
	}
	status.Conditions = app.Status.Conditions
	status.FriendlyDescription = app.Status.FriendlyDescription
	status.UsefulErrorMessage = app.Status.UsefulErrorMessage
	for _, c := range app.Status.Conditions {
		if c.Type == kappctrlv1alpha1.ReconcileSucceeded && c.Status == corev1.ConditionTrue {
			status.Version = pkg.Spec.Version
		}
	}
}

// resolve finds the highest Package version of refName that versionSelection allows.
func (r *Reconciler) resolve(ctx context.Context, pi *pkgingv1alpha1.PackageInstall) (*datapkgingv1alpha1.Package, error) {
	if pi.Spec.PackageRef == nil || pi.Spec.PackageRef.RefName == "" {
		return nil, fmt.Errorf("spec.packageRef.refName is empty: name the package to install, as listed by `slipway package available list`")
	}
	refName := pi.Spec.PackageRef.RefName
	byVersion := map[string]datapkgingv1alpha1.Package{}
	for _, ns := range []string{r.GlobalNamespace, pi.Namespace} {
		list := &datapkgingv1alpha1.PackageList{}
		if err := r.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("failed to list Packages in %s: %w", ns, err)
		}
		for _, p := range list.Items {
			if p.Spec.RefName == refName {
				// Packages of the install's own namespace shadow global ones.
				byVersion[p.Spec.Version] = p
			}
		}
	}
	var available []string
	for v := range byVersion {
		available = append(available, v)
	}
	sort.Strings(available)
	if len(available) == 0 {
		return nil, fmt.Errorf("expected to find at least one version, but did not: no Package with refName %q in namespace %s or the global namespace %s", refName, pi.Namespace, r.GlobalNamespace)
	}
	semver := vendirversions.VersionSelectionSemver{}
	if vs := pi.Spec.PackageRef.VersionSelection; vs != nil {
		semver = *vs.DeepCopy()
	}
	if semver.Prereleases == nil {
		if v, err := versions.NewSemver(semver.Constraints); err == nil && len(v.Pre) > 0 {
			// A constraint that is itself a prerelease allows prereleases, as in kapp-controller.
			semver.Prereleases = &vendirversions.VersionSelectionSemverPrereleases{}
		}
	}
	selected, err := versions.HighestConstrainedVersion(available, vendirversions.VersionSelection{Semver: &semver})
	if err != nil {
		return nil, fmt.Errorf("expected to find at least one version, but did not (constraints %q, available versions %s): %w",
			semver.Constraints, strings.Join(available, ", "), err)
	}
	pkg := byVersion[selected]
	return &pkg, nil
}

// syncPeriod is the PackageInstall's sync period, at least the App's floor (30 s), as
// kapp-controller documents.
func syncPeriod(pi *pkgingv1alpha1.PackageInstall) time.Duration {
	if pi.Spec.SyncPeriod != nil && pi.Spec.SyncPeriod.Duration > 0 {
		return max(pi.Spec.SyncPeriod.Duration, app.MinSyncPeriod)
	}
	return defaultSyncPeriod
}
