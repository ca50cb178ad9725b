// Package clusterbootstrap is the ClusterBootstrap controller of seeds/002: it gives every
// Cluster that resolved to a TKR a ClusterBootstrap cloned from the release's template, installs
// kapp-controller on the workload cluster through a PackageInstall on the management cluster,
// then the cluster's core and additional packages on the workload cluster, reports their state
// on the ClusterBootstrap, moves them to a new release on upgrade and removes the additional
// ones on deletion.
//
// It is written as Cluster API's controllers are: one pass reads the Cluster and its
// ClusterBootstrap, moves its spec to the Cluster's release when it must (one write), then runs
// its phases in order, each returning an error, and writes the ClusterBootstrap's finalizer and
// status once, with a patch helper, when the pass ends.
package clusterbootstrap

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/secret"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"

	cniv1alpha1 "github.com/slipway-dev/slipway/api/cni/v1alpha1"
	cpiv1alpha1 "github.com/slipway-dev/slipway/api/cpi/v1alpha1"
	csiv1alpha1 "github.com/slipway-dev/slipway/api/csi/v1alpha1"
	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Defaults of the Reconciler's settings.
const (
	DefaultDeleteTimeout = 10 * time.Minute
	DefaultStatusPeriod  = 10 * time.Second
)

// Reasons of the Events the controller records on ClusterBootstraps and Clusters.
const (
	ReasonCloned            = "Cloned"
	ReasonAdopted           = "Adopted"
	ReasonUpgraded          = "Upgraded"
	ReasonPackageFailed     = "PackageReconcileFailed"
	ReasonPackagesSucceeded = "PackagesReconciled"
	ReasonUnpaused          = "Unpaused"
	ReasonInvalid           = "InvalidClusterBootstrap"
	ReasonWaitingForUsers   = "WaitingForClusterBootstrap"
)

// Reconciler reconciles the ClusterBootstrap of each Cluster labelled with a TKR.
type Reconciler struct {
	Client client.Client
	// ClusterCache is Cluster API's connection to the workload clusters.
	ClusterCache clustercache.ClusterCache
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
	// SystemNamespace holds the ClusterBootstrapTemplates and release Packages; it also
	// receives the packages on workload clusters.
	SystemNamespace string
	// DeleteTimeout bounds how long a Cluster's deletion waits for its additional packages to be
	// removed from the workload cluster.
	DeleteTimeout time.Duration
	// StatusPeriod is how often the packages' state is read back while any has not succeeded.
	StatusPeriod time.Duration

	controller controller.Controller
	// apiReader reads past the manager's cache, where a ClusterBootstrap's metadata and status,
	// written one after the other, may show one without the other.
	apiReader client.Reader
}

// scope is what one pass over a Cluster works with.
type scope struct {
	cluster *clusterv1.Cluster
	tkrName string
	cb      *runv1alpha3.ClusterBootstrap
	// remote is a client of the workload cluster, from the cluster cache.
	remote client.Client
	// settled says every package's PackageInstall reports ReconcileSucceeded.
	settled bool
	// remoteInstalls are the PackageInstalls on the workload cluster that reconcileStatus read.
	remoteInstalls []*pkgingv1alpha1.PackageInstall
	// foreign are the refNames of the CPI and CSI of another infrastructure than the
	// cluster's, which a ClusterBootstrap written before its Cluster existed (a management
	// cluster's, as TKG's CLI writes it) may name: they are neither cloned nor installed.
	foreign map[string]bool
}

// packagesOnRemote lists what the controller installs on the workload cluster, in order: CNI,
// CPI and CSI, then the additional packages. kapp-controller is installed from the management
// cluster.
func (s *scope) packagesOnRemote() []*runv1alpha3.ClusterBootstrapPackage {
	var out []*runv1alpha3.ClusterBootstrapPackage
	for _, p := range addons.Packages(s.cb.Spec) {
		if p != s.cb.Spec.Kapp && !s.foreign[p.RefName] {
			out = append(out, p)
		}
	}
	return out
}

func (s *scope) management() bool {
	_, ok := s.cluster.Labels[tkg.LabelManagementCluster]
	return ok
}

// SetupWithManager registers the controller. It looks again at a Cluster when its release,
// ClusterBootstrap, values Secrets, *Config objects or PackageInstalls change, and when the
// cluster cache connects to it.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.ClusterCache == nil {
		return errors.New("the ClusterBootstrap controller needs a ClusterCache")
	}
	if r.SystemNamespace == "" {
		r.SystemNamespace = tkg.SystemNamespace
	}
	if r.DeleteTimeout == 0 {
		r.DeleteTimeout = DefaultDeleteTimeout
	}
	if r.StatusPeriod == 0 {
		r.StatusPeriod = DefaultStatusPeriod
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("clusterbootstrap-controller")
	}
	r.apiReader = mgr.GetAPIReader()
	hasTKR := predicate.NewPredicateFuncs(func(o client.Object) bool {
		_, ok := o.GetLabels()[runv1alpha3.LabelTKR]
		return ok
	})
	b := ctrl.NewControllerManagedBy(mgr).
		Named("clusterbootstrap").
		For(&clusterv1.Cluster{}, builder.WithPredicates(hasTKR)).
		Watches(&runv1alpha3.TanzuKubernetesRelease{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfTKR)).
		Watches(&runv1alpha3.ClusterBootstrap{}, handler.EnqueueRequestsFromMapFunc(sameName)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(labelledCluster)).
		Watches(&pkgingv1alpha1.PackageInstall{}, handler.EnqueueRequestsFromMapFunc(annotatedCluster)).
		WatchesRawSource(r.ClusterCache.GetClusterSource("clusterbootstrap", sameName))
	for _, provider := range []client.Object{&runv1alpha3.KappControllerConfig{}, &cniv1alpha1.AntreaConfig{},
		&cniv1alpha1.CalicoConfig{}, &cpiv1alpha1.VSphereCPIConfig{}, &csiv1alpha1.VSphereCSIConfig{}} {
		b = b.Watches(provider, handler.EnqueueRequestsFromMapFunc(labelledCluster))
	}
	c, err := b.Build(r)
	r.controller = c
	return err
}

func (r *Reconciler) clustersOfTKR(ctx context.Context, o client.Object) []ctrl.Request {
	clusters := &clusterv1.ClusterList{}
	if err := r.Client.List(ctx, clusters, client.MatchingLabels{runv1alpha3.LabelTKR: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list Clusters")
		return nil
	}
	out := make([]ctrl.Request, len(clusters.Items))
	for i := range clusters.Items {
		out[i].NamespacedName = client.ObjectKeyFromObject(&clusters.Items[i])
	}
	return out
}

func sameName(_ context.Context, o client.Object) []ctrl.Request {
	return []ctrl.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
}

// labelledCluster maps a values Secret or *Config, labelled with its cluster, to the Cluster.
func labelledCluster(_ context.Context, o client.Object) []ctrl.Request {
	if name := o.GetLabels()[tkg.LabelClusterName]; name != "" {
		return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
	}
	return nil
}

// annotatedCluster maps a PackageInstall the controller made, on the management or the workload
// cluster, to its Cluster.
func annotatedCluster(_ context.Context, o client.Object) []ctrl.Request {
	name, namespace := o.GetAnnotations()[tkg.AnnotationClusterName], o.GetAnnotations()[tkg.AnnotationClusterNamespace]
	if name == "" || namespace == "" {
		return nil
	}
	return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: namespace, Name: name}}}
}

// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one Cluster's packages to what its ClusterBootstrap says.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	s := &scope{cluster: cluster, tkrName: cluster.Labels[runv1alpha3.LabelTKR]}
	if s.tkrName == "" {
		return ctrl.Result{}, nil
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, cluster)
	}
	// A Cluster paused by its user is left alone; one paused by the upgrade webhook is what
	// this controller must finish and unpause.
	if ptr.Deref(cluster.Spec.Paused, false) && cluster.Annotations[tkg.AnnotationPaused] == "" {
		return ctrl.Result{}, nil
	}
	tkr := &runv1alpha3.TanzuKubernetesRelease{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: s.tkrName}, tkr); err != nil {
		// The release watch brings the Cluster back when it appears.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cb, err := r.getOrCreate(ctx, s)
	if err != nil || cb == nil {
		return r.retry(ctx, cb, err)
	}
	if cb.Spec == nil {
		return r.retry(ctx, cb, reconcile.TerminalError(fmt.Errorf("ClusterBootstrap %s has no spec: give it one, or delete it to have it cloned from release %s",
			klog.KObj(cb), s.tkrName)))
	}
	if cb.Spec.Paused {
		return ctrl.Result{}, nil
	}
	s.cb = cb
	if s.foreign, err = foreignPackages(ctx, r.Client, cluster, cb); err != nil {
		return ctrl.Result{}, err
	}
	// The ClusterBootstrap's spec follows the release first, written on its own; the release
	// is recorded in status.resolvedTKR, with the rest of the status, only once it does.
	followed, err := r.reconcileRelease(ctx, s)
	if err != nil {
		return r.retry(ctx, cb, err)
	}
	helper, err := patch.NewHelper(cb, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() {
		if err := helper.Patch(ctx, cb); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, fmt.Errorf("failed to patch ClusterBootstrap %s: %w", klog.KObj(cb), err)})
		}
	}()
	if cb.Status.ResolvedTKR != followed {
		ctrl.LoggerFrom(ctx).Info("ClusterBootstrap follows release", "TanzuKubernetesRelease", followed)
		cb.Status.ResolvedTKR = followed
	}
	return r.reconcileNormal(ctx, s)
}

// reconcileNormal runs the phases of a Cluster that is not being deleted and whose
// ClusterBootstrap follows its release, in order: once the control plane is up,
// kapp-controller and the packages are installed, the finalizers set, the packages' state read
// back and the pause of an upgrade lifted.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	// The pause the upgrade webhook set is lifted as soon as the spec follows the new release:
	// the topology may roll out while the packages are installed.
	if err := r.reconcileUnpause(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileOwners(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if !ptr.Deref(s.cluster.Status.Initialization.ControlPlaneInitialized, false) {
		// The Cluster's status change brings it back.
		return ctrl.Result{}, nil
	}
	remote, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster))
	if errors.Is(err, clustercache.ErrClusterNotConnected) {
		// The cluster cache's source brings the Cluster back when it connects.
		ctrl.LoggerFrom(ctx).V(2).Info("Waiting for the cluster cache to connect to the workload cluster")
		return ctrl.Result{RequeueAfter: r.StatusPeriod}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	s.remote = remote
	for _, phase := range []func(context.Context, *scope) error{
		r.reconcileKappController,
		r.reconcileRemote,
		r.reconcileFinalizers,
		r.reconcileStatus,
		r.reconcileAbandoned,
	} {
		if err := phase(ctx, s); err != nil {
			return r.retry(ctx, s.cb, err)
		}
	}
	if !s.settled {
		return ctrl.Result{RequeueAfter: r.StatusPeriod}, nil
	}
	return ctrl.Result{RequeueAfter: addons.PackageInstallSyncPeriod}, nil
}

// retry looks again later: soon and quietly when a package only waits (for its values, or for
// the workload cluster's kapp-controller to install its CRDs), never for what will not fix
// itself (said on the ClusterBootstrap as an Event), with the controller's backoff on any other
// error. controller-runtime ignores a RequeueAfter returned with an error, so none is.
func (r *Reconciler) retry(ctx context.Context, cb *runv1alpha3.ClusterBootstrap, err error) (ctrl.Result, error) {
	switch {
	case err == nil:
		return ctrl.Result{}, nil
	case isWaiting(err):
		ctrl.LoggerFrom(ctx).Info(err.Error())
		return ctrl.Result{RequeueAfter: r.StatusPeriod}, nil
	case errors.Is(err, reconcile.TerminalError(nil)) && cb != nil:
		r.Recorder.Eventf(cb, nil, corev1.EventTypeWarning, ReasonInvalid, "Reconcile", "%v", err)
	}
	return ctrl.Result{}, err
}

// reconcileKappController makes, on the management cluster, the PackageInstall of a workload
// cluster's kapp-controller.
func (r *Reconciler) reconcileKappController(ctx context.Context, s *scope) error {
	if s.management() {
		return nil
	}
	return r.installKappController(ctx, s.cluster, s.cb)
}

// reconcileRemote installs the CNI, CPI, CSI and additional packages on the workload cluster.
func (r *Reconciler) reconcileRemote(ctx context.Context, s *scope) error {
	if err := r.prepareRemote(ctx, s.remote); err != nil {
		return fmt.Errorf("cluster %s: %w", klog.KObj(s.cluster), err)
	}
	for _, pkg := range s.packagesOnRemote() {
		if err := r.installRemote(ctx, s.cluster, pkg, s.remote); err != nil {
			return err
		}
	}
	// The PackageInstalls on the workload cluster bring the Cluster back when they change.
	return r.ClusterCache.Watch(ctx, client.ObjectKeyFromObject(s.cluster), clustercache.NewWatcher(clustercache.WatcherOptions{
		Name:         "clusterbootstrap-watchPackageInstalls",
		Watcher:      r.controller,
		Kind:         &pkgingv1alpha1.PackageInstall{},
		EventHandler: handler.EnqueueRequestsFromMapFunc(annotatedCluster),
	}))
}

// reconcileFinalizers holds a workload cluster, its kubeconfig Secret and its ClusterBootstrap
// until its additional packages are removed. A management cluster's are not removed, as TKG's:
// it gets no finalizer, which a cleanup cluster without the addons manager could not remove.
// The ClusterBootstrap's finalizer is written with the pass's patch.
func (r *Reconciler) reconcileFinalizers(ctx context.Context, s *scope) error {
	if s.management() || len(s.cb.Spec.AdditionalPackages) == 0 {
		return nil
	}
	kubeconfig := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.cluster.Namespace, Name: secret.Name(s.cluster.Name, secret.Kubeconfig)}, kubeconfig); err != nil {
		return err
	}
	for _, o := range []client.Object{s.cluster, kubeconfig} {
		if controllerutil.ContainsFinalizer(o, addons.Finalizer) {
			continue
		}
		patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
		controllerutil.AddFinalizer(o, addons.Finalizer)
		if err := r.Client.Patch(ctx, o, patch); err != nil {
			return fmt.Errorf("failed to add finalizer to %s: %w", o.GetName(), err)
		}
	}
	controllerutil.AddFinalizer(s.cb, addons.Finalizer)
	return nil
}

// foreignPackages returns the refNames of the ClusterBootstrap's CPI and CSI that configure
// another infrastructure than the cluster's.
func foreignPackages(ctx context.Context, c client.Reader, cluster *clusterv1.Cluster, cb *runv1alpha3.ClusterBootstrap) (map[string]bool, error) {
	dropped, err := addons.DropForeignProviders(ctx, c, cluster, cb.Spec.DeepCopy())
	if err != nil {
		return nil, err
	}
	foreign := map[string]bool{}
	for _, name := range dropped {
		foreign[name] = true
	}
	return foreign, nil
}

// reconcileUnpause lifts the pause the upgrade webhook set, once the ClusterBootstrap follows
// the release the Cluster was paused for.
func (r *Reconciler) reconcileUnpause(ctx context.Context, s *scope) error {
	cluster := s.cluster
	want, ok := cluster.Annotations[tkg.AnnotationPaused]
	if !ok || want != s.cb.Status.ResolvedTKR {
		return nil
	}
	patch := client.MergeFrom(cluster.DeepCopy())
	delete(cluster.Annotations, tkg.AnnotationPaused)
	cluster.Spec.Paused = ptr.To(false)
	if err := r.Client.Patch(ctx, cluster, patch); err != nil {
		return fmt.Errorf("failed to unpause cluster %s: %w", klog.KObj(cluster), err)
	}
	r.Recorder.Eventf(cluster, s.cb, corev1.EventTypeNormal, ReasonUnpaused, "Unpause", "Unpaused: the cluster's packages follow release %s", want)
	ctrl.LoggerFrom(ctx).Info("Unpaused the cluster: its packages follow the new release", "TanzuKubernetesRelease", want)
	return nil
}
