package app

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/cluster-api/util/finalizers"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/slipway-dev/slipway/internal/carvel/deploy"
	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/carvel/template"
	"github.com/slipway-dev/slipway/internal/controllers/packaging/status"
)

// Finalizer is kapp-controller's: the App's objects are deleted before the App.
const Finalizer = "finalizers.kapp-ctrl.k14s.io/delete"

// Defaults of kapp-controller.
const (
	defaultSyncPeriod = 30 * time.Second
	// MinSyncPeriod is the shortest sync period of an App or a PackageInstall.
	MinSyncPeriod      = 30 * time.Second
	defaultWaitTimeout = 15 * time.Minute
	deleteTimeout      = 5 * time.Minute
)

// Reconciler reconciles Apps.
type Reconciler struct {
	Client client.Client
	// Config reaches the App's own cluster; service-account clients are built from it.
	Config *rest.Config
	// Trust is how registries are trusted (kapp-controller-config); nil trusts the system's CAs.
	Trust *fetch.ConfigTrust
}

// SetupWithManager registers the reconciler, watching Apps and the Secrets and ConfigMaps they
// read, so that a values change deploys at once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&kappctrlv1alpha1.App{}, builder.WithPredicates(predicate.Or(
			// Status writes of its own do not trigger another sync; syncPeriod does.
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.appsInNamespace)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.appsInNamespace)).
		Complete(r)
}

// appsInNamespace maps a Secret or ConfigMap to the Apps of its namespace that name it.
func (r *Reconciler) appsInNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	apps := &kappctrlv1alpha1.AppList{}
	if err := r.Client.List(ctx, apps, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, a := range apps.Items {
		if references(&a, obj.GetName()) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&a)})
		}
	}
	return reqs
}

func references(a *kappctrlv1alpha1.App, name string) bool {
	for _, t := range a.Spec.Template {
		if t.Ytt == nil {
			continue
		}
		for _, v := range t.Ytt.ValuesFrom {
			if (v.SecretRef != nil && v.SecretRef.Name == name) || (v.ConfigMapRef != nil && v.ConfigMapRef.Name == name) {
				return true
			}
		}
	}
	for _, f := range a.Spec.Fetch {
		if f.Inline == nil {
			continue
		}
		for _, p := range f.Inline.PathsFrom {
			if (p.SecretRef != nil && p.SecretRef.Name == name) || (p.ConfigMapRef != nil && p.ConfigMapRef.Name == name) {
				return true
			}
		}
	}
	return a.Spec.Cluster != nil && a.Spec.Cluster.KubeconfigSecretRef != nil && a.Spec.Cluster.KubeconfigSecretRef.Name == name
}

// scope is what the phases of one reconcile share; the deferred status write reads it.
type scope struct {
	app    *kappctrlv1alpha1.App
	status kappctrlv1alpha1.AppStatus
}

// Reconcile runs the App's pipeline, or deletes what it deployed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	app := &kappctrlv1alpha1.App{}
	if err := r.Client.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("App", klog.KObj(app))
	ctx = ctrl.LoggerInto(ctx, log)

	// Go on in the same pass once the finalizer is added: its own update does not trigger
	// another.
	if _, err := finalizers.EnsureFinalizer(ctx, r.Client, app, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	s := &scope{app: app, status: *app.Status.DeepCopy()}
	defer func() {
		if err := r.writeStatus(ctx, s); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()
	if !app.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	if app.Spec.Paused || app.Spec.Canceled {
		s.status.FriendlyDescription = "Canceled/paused"
		s.status.Conditions = nil
		return ctrl.Result{}, nil
	}
	return r.reconcileNormal(ctx, s)
}

func (r *Reconciler) writeStatus(ctx context.Context, s *scope) error {
	s.status.ObservedGeneration = s.app.Generation
	if equalStatus(s.app.Status, s.status) {
		return nil
	}
	patch := client.MergeFrom(s.app.DeepCopy())
	s.app.Status = s.status
	if err := r.Client.Status().Patch(ctx, s.app, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to update status of App %s: %w", klog.KObj(s.app), err)
	}
	return nil
}

// retryAfter is when a failed App is tried again: 2^failures seconds, at most its sync period,
// as kapp-controller backs off, so that a failure that clears itself (a CRD another App is
// installing) costs seconds, not a sync period.
func retryAfter(failures int, syncPeriod time.Duration) time.Duration {
	if failures >= 30 {
		return syncPeriod
	}
	return min(time.Duration(1<<failures)*time.Second, syncPeriod)
}

// reconcileNormal fetches, templates and deploys.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := s.app
	requeue := ctrl.Result{RequeueAfter: syncPeriod(app)}
	fail := func(stage string, err error) (ctrl.Result, error) {
		s.status.ConsecutiveReconcileFailures++
		s.status.ConsecutiveReconcileSuccesses = 0
		msg := fmt.Sprintf("%s: %v", stage, err)
		s.status.UsefulErrorMessage = msg
		s.status.FriendlyDescription = "Reconcile failed: " + firstLine(msg)
		setCondition(&s.status, kappctrlv1alpha1.ReconcileFailed, "", msg)
		ctrl.LoggerFrom(ctx).Info("Reconcile failed", "stage", stage, "error", err.Error())
		return ctrl.Result{RequeueAfter: retryAfter(s.status.ConsecutiveReconcileFailures, requeue.RequeueAfter)}, nil
	}
	target, err := r.target(ctx, app)
	if err != nil {
		return fail("Preparing kapp", err)
	}
	dir, err := os.MkdirTemp("", "slipway-app-")
	if err != nil {
		return ctrl.Result{}, err
	}
	defer os.RemoveAll(dir)
	now := metav1.Now()

	transport, err := r.Trust.Transport(ctx)
	if err == nil {
		err = fetch.Fetch(ctx, r.Client, app.Namespace, app.Spec.Fetch, dir, transport)
	}
	s.status.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: now, UpdatedAt: metav1.Now(), ExitCode: status.ExitCode(err), Error: status.Error(err)}
	if err != nil {
		return fail("Fetching resources", err)
	}
	out, err := template.Template(ctx, r.Client, app.Namespace, app.Spec.Template, dir)
	s.status.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: metav1.Now(), ExitCode: status.ExitCode(err), Error: status.Error(err)}
	if err != nil {
		return fail("Templating dir", err)
	}
	objs, err := deploy.Parse(out)
	if err == nil {
		var res deploy.Result
		res, err = deploy.Apply(ctx, target, deploy.AppName(app.Name), objs, waitTimeout(app))
		s.status.Deploy = &kappctrlv1alpha1.AppStatusDeploy{
			StartedAt: now, UpdatedAt: metav1.Now(), Finished: true, ExitCode: status.ExitCode(err), Error: status.Error(err),
			KappDeployStatus: &kappctrlv1alpha1.KappDeployStatus{AssociatedResources: kappctrlv1alpha1.AssociatedResources{
				Label: res.Label, Namespaces: res.Namespaces, GroupKinds: res.GroupKinds,
			}},
		}
		if err == nil {
			s.status.Deploy.Stdout = fmt.Sprintf("Succeeded: applied %d resources", len(objs))
		}
	}
	if err != nil {
		return fail("Deploying", err)
	}
	s.status.ConsecutiveReconcileSuccesses++
	s.status.ConsecutiveReconcileFailures = 0
	s.status.UsefulErrorMessage = ""
	s.status.FriendlyDescription = "Reconcile succeeded"
	setCondition(&s.status, kappctrlv1alpha1.ReconcileSucceeded, "", "")
	return requeue, nil
}

// reconcileDelete removes what the App deployed, or only forgets it with noopDelete.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := s.app
	if !controllerutil.ContainsFinalizer(app, Finalizer) {
		return ctrl.Result{}, nil
	}
	s.status.FriendlyDescription = "Deleting"
	setCondition(&s.status, kappctrlv1alpha1.Deleting, "", "")
	target, err := r.target(ctx, app)
	unreachable := err != nil && (app.Status.Deploy == nil || app.Spec.NoopDelete)
	if unreachable {
		// An App that never reached its target (its service account is missing, say) deployed
		// nothing, and a noopDelete App leaves what it deployed anyway (its cluster's kubeconfig
		// Secret went with the cluster, say): nothing to do, and waiting would keep it forever.
		ctrl.LoggerFrom(ctx).Info("Deleting an App whose target is unreachable, with nothing to delete there", "reason", err.Error())
		err = nil
	}
	if err == nil && !unreachable {
		if app.Spec.NoopDelete {
			err = deploy.Forget(ctx, target, deploy.AppName(app.Name))
		} else {
			err = deploy.Delete(ctx, target, deploy.AppName(app.Name), deploy.ResultOf(app.Status.Deploy), deleteTimeout)
		}
	}
	if err != nil {
		s.status.FriendlyDescription = "Delete failed: " + firstLine(err.Error())
		s.status.UsefulErrorMessage = err.Error()
		setCondition(&s.status, kappctrlv1alpha1.DeleteFailed, "", err.Error())
		return ctrl.Result{RequeueAfter: 10 * time.Second}, nil
	}
	patch := client.MergeFrom(app.DeepCopy())
	controllerutil.RemoveFinalizer(app, Finalizer)
	return ctrl.Result{}, r.Client.Patch(ctx, app, patch)
}

// syncPeriod is the App's sync period: at least MinSyncPeriod, as kapp-controller documents
// ("Always >= 30s. If value below 30s is specified, 30s will be used"), so that a failing App
// with a tiny period is not retried, and its status rewritten, without pause.
func syncPeriod(app *kappctrlv1alpha1.App) time.Duration {
	if app.Spec.SyncPeriod != nil && app.Spec.SyncPeriod.Duration > 0 {
		return max(app.Spec.SyncPeriod.Duration, MinSyncPeriod)
	}
	return defaultSyncPeriod
}

// waitTimeout reads kapp's --wait-timeout from the deploy step's raw options.
func waitTimeout(app *kappctrlv1alpha1.App) time.Duration {
	for _, d := range app.Spec.Deploy {
		if d.Kapp == nil {
			continue
		}
		for _, o := range d.Kapp.RawOptions {
			if v, ok := strings.CutPrefix(o, "--wait-timeout="); ok {
				if t, err := time.ParseDuration(v); err == nil {
					return t
				}
			}
		}
	}
	return defaultWaitTimeout
}

func setCondition(status *kappctrlv1alpha1.AppStatus, t kappctrlv1alpha1.ConditionType, reason, message string) {
	status.Conditions = []kappctrlv1alpha1.Condition{{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message}}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
