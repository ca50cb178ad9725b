package packagerepository

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
	"sigs.k8s.io/cluster-api/util/finalizers"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/carvel/deploy"
	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/carvel/template"
	stagestatus "github.com/slipway-dev/slipway/internal/controllers/packaging/status"
)

// Names kapp-controller gives.
const (
	// Finalizer removes a repository's packages before the repository.
	Finalizer = "finalizers.packagerepository.packaging.carvel.dev/delete"
	// AnnotationRepositoryRef on a Package or PackageMetadata names its repository: ns/name.
	AnnotationRepositoryRef = "packaging.carvel.dev/package-repository-ref"

	defaultSyncPeriod = 5 * time.Minute
	waitTimeout       = time.Minute
)

// Reconciler reconciles PackageRepositories.
type Reconciler struct {
	Client client.Client
	// Trust is how registries are trusted (kapp-controller-config); nil trusts the system's CAs.
	Trust *fetch.ConfigTrust
}

// SetupWithManager registers the reconciler.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&pkgingv1alpha1.PackageRepository{}, builder.WithPredicates(predicate.Or(
		// Status writes of its own do not trigger another sync; syncPeriod does.
		predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).Complete(r)
}

// Reconcile fetches the repository and keeps its packages.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	repo := &pkgingv1alpha1.PackageRepository{}
	if err := r.Client.Get(ctx, req.NamespacedName, repo); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("PackageRepository", klog.KObj(repo)))
	// Go on in the same pass once the finalizer is added: its own update does not trigger
	// another.
	if _, err := finalizers.EnsureFinalizer(ctx, r.Client, repo, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	status := *repo.Status.DeepCopy()
	defer func() {
		status.ObservedGeneration = repo.Generation
		if equalStatus(status, repo.Status) {
			return
		}
		patch := client.MergeFrom(repo.DeepCopy())
		repo.Status = status
		if err := r.Client.Status().Patch(ctx, repo, patch); err != nil && !apierrors.IsNotFound(err) {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()
	target := deploy.Target{Client: r.Client, Namespace: repo.Namespace}
	if !repo.DeletionTimestamp.IsZero() {
		if err := deploy.Delete(ctx, target, deploy.RepositoryName(repo.Name), deploy.ResultOf(repo.Status.Deploy), waitTimeout); err != nil {
			status.FriendlyDescription = "Delete failed: " + err.Error()
			return ctrl.Result{RequeueAfter: 10 * time.Second}, nil
		}
		patch := client.MergeFrom(repo.DeepCopy())
		controllerutil.RemoveFinalizer(repo, Finalizer)
		return ctrl.Result{}, r.Client.Patch(ctx, repo, patch)
	}
	if repo.Spec.Paused {
		status.FriendlyDescription = "Canceled/paused"
		status.Conditions = nil
		return ctrl.Result{}, nil
	}
	requeue := ctrl.Result{RequeueAfter: defaultSyncPeriod}
	if repo.Spec.SyncPeriod != nil && repo.Spec.SyncPeriod.Duration > 0 {
		requeue.RequeueAfter = repo.Spec.SyncPeriod.Duration
	}
	if stage, err := r.sync(ctx, repo, &status, target); err != nil {
		err = fmt.Errorf("%s: %w", stage, err)
		status.ConsecutiveReconcileFailures++
		status.ConsecutiveReconcileSuccesses = 0
		status.UsefulErrorMessage = err.Error()
		status.FriendlyDescription = "Reconcile failed: " + strings.SplitN(err.Error(), "\n", 2)[0]
		status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.ReconcileFailed, Status: corev1.ConditionTrue, Message: err.Error()}}
		return requeue, nil
	}
	status.ConsecutiveReconcileSuccesses++
	status.ConsecutiveReconcileFailures = 0
	status.UsefulErrorMessage = ""
	status.FriendlyDescription = "Reconcile succeeded"
	status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.ReconcileSucceeded, Status: corev1.ConditionTrue}}
	return requeue, nil
}

// sync runs the repository's fetch, template and deploy; a failure says at which stage, as
// kapp-controller's messages do.
func (r *Reconciler) sync(ctx context.Context, repo *pkgingv1alpha1.PackageRepository, status *pkgingv1alpha1.PackageRepositoryStatus, target deploy.Target) (string, error) {
	if repo.Spec.Fetch == nil {
		return "Fetching resources", fmt.Errorf("spec.fetch is empty: name an imgpkgBundle, image or inline repository")
	}
	dir, err := os.MkdirTemp("", "slipway-repo-")
	if err != nil {
		return "Fetching resources", err
	}
	defer os.RemoveAll(dir)
	f := repo.Spec.Fetch
	step := kappctrlv1alpha1.AppFetch{Inline: f.Inline, Image: f.Image, ImgpkgBundle: f.ImgpkgBundle, HTTP: f.HTTP, Git: f.Git}
	now := metav1.Now()
	transport, err := r.Trust.Transport(ctx)
	if err == nil {
		err = fetch.Fetch(ctx, r.Client, repo.Namespace, []kappctrlv1alpha1.AppFetch{step}, dir, transport)
	}
	status.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: now, UpdatedAt: metav1.Now(), ExitCode: stagestatus.ExitCode(err), Error: stagestatus.Error(err)}
	if err != nil {
		return "Fetching resources", err
	}
	steps := []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{IgnoreUnknownComments: true, Paths: []string{"packages"}}}}
	if _, err := os.Stat(dir + "/" + bundle.ImagesLockPath); err == nil {
		steps = append(steps, kappctrlv1alpha1.AppTemplate{Kbld: &kappctrlv1alpha1.AppTemplateKbld{Paths: []string{"-", bundle.ImagesLockPath}}})
	}
	out, err := template.Template(ctx, r.Client, repo.Namespace, steps, dir)
	status.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: metav1.Now(), ExitCode: stagestatus.ExitCode(err), Error: stagestatus.Error(err)}
	if err != nil {
		return "Templating packages", err
	}
	objs, err := deploy.Parse(out)
	if err != nil {
		return "Templating packages", err
	}
	ref := repo.Namespace + "/" + repo.Name
	for _, o := range objs {
		switch o.GroupVersionKind().GroupKind().String() {
		case "Package.data.packaging.carvel.dev", "PackageMetadata.data.packaging.carvel.dev":
		default:
			return "Templating packages", fmt.Errorf("packages/ holds %s %s: a repository may only hold Package and PackageMetadata objects", o.GetKind(), o.GetName())
		}
		o.SetNamespace(repo.Namespace)
		annotations := o.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[AnnotationRepositoryRef] = ref
		o.SetAnnotations(annotations)
	}
	res, err := deploy.Apply(ctx, target, deploy.RepositoryName(repo.Name), objs, waitTimeout)
	status.Deploy = &kappctrlv1alpha1.AppStatusDeploy{StartedAt: now, UpdatedAt: metav1.Now(), Finished: true, ExitCode: stagestatus.ExitCode(err), Error: stagestatus.Error(err),
		KappDeployStatus: &kappctrlv1alpha1.KappDeployStatus{AssociatedResources: kappctrlv1alpha1.AssociatedResources{Label: res.Label, Namespaces: res.Namespaces, GroupKinds: res.GroupKinds}}}
	if err != nil {
		return "Deploying packages", err
	}
	return "", nil
}

// equalStatus ignores timestamps and success counts, so that a converged repository is not
// rewritten on every sync.
func equalStatus(a, b pkgingv1alpha1.PackageRepositoryStatus) bool {
	strip := func(s pkgingv1alpha1.PackageRepositoryStatus) pkgingv1alpha1.PackageRepositoryStatus {
		s = *s.DeepCopy()
		stagestatus.Stages{Fetch: s.Fetch, Template: s.Template, Deploy: s.Deploy, Successes: &s.ConsecutiveReconcileSuccesses}.ClearTimes()
		return s
	}
	return reflect.DeepEqual(strip(a), strip(b))
}
