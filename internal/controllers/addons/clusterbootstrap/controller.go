// Package clusterbootstrap is the ClusterBootstrap controller of seeds/002: it gives every
// Cluster that resolved to a TKR a ClusterBootstrap cloned from the release's template, installs
// kapp-controller on the workload cluster through a PackageInstall on the management cluster,
// then the cluster's core and additional packages on the workload cluster, reports their state
// on the ClusterBootstrap, moves them to a new release on upgrade and removes the additional
// ones on deletion.
package clusterbootstrap

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/secret"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

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

// Reconciler reconciles the ClusterBootstrap of each Cluster labelled with a TKR.
type Reconciler struct {
	Client client.Client
	// SystemNamespace holds the ClusterBootstrapTemplates and release Packages; it also
	// receives the packages on workload clusters.
	SystemNamespace string
	// DeleteTimeout bounds how long a Cluster's deletion waits for its additional packages to be
	// removed from the workload cluster.
	DeleteTimeout time.Duration
	// StatusPeriod is how often the packages' state is read back while any has not succeeded.
	StatusPeriod time.Duration

	remotes remoteClients
}

// SetupWithManager registers the controller. It looks again at a Cluster when its release,
// ClusterBootstrap, values Secrets, kubeconfig or *Config objects change.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.SystemNamespace == "" {
		r.SystemNamespace = tkg.SystemNamespace
	}
	if r.DeleteTimeout == 0 {
		r.DeleteTimeout = DefaultDeleteTimeout
	}
	if r.StatusPeriod == 0 {
		r.StatusPeriod = DefaultStatusPeriod
	}
	r.remotes.scheme = mgr.GetScheme()
	hasTKR := predicate.NewPredicateFuncs(func(o client.Object) bool {
		_, ok := o.GetLabels()[runv1alpha3.LabelTKR]
		return ok
	})
	b := ctrl.NewControllerManagedBy(mgr).
		Named("clusterbootstrap").
		For(&clusterv1.Cluster{}, builder.WithPredicates(hasTKR)).
		Watches(&runv1alpha3.TanzuKubernetesRelease{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfTKR)).
		Watches(&runv1alpha3.ClusterBootstrap{}, handler.EnqueueRequestsFromMapFunc(sameName)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(secretCluster))
	for _, provider := range []client.Object{&runv1alpha3.KappControllerConfig{}, &cniv1alpha1.AntreaConfig{},
		&cniv1alpha1.CalicoConfig{}, &cpiv1alpha1.VSphereCPIConfig{}, &csiv1alpha1.VSphereCSIConfig{}} {
		b = b.Watches(provider, handler.EnqueueRequestsFromMapFunc(labelledCluster))
	}
	return b.Complete(r)
}

func (r *Reconciler) clustersOfTKR(ctx context.Context, o client.Object) []ctrl.Request {
	clusters := &clusterv1.ClusterList{}
	if err := r.Client.List(ctx, clusters, client.MatchingLabels{runv1alpha3.LabelTKR: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "failed to list Clusters")
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

func labelledCluster(_ context.Context, o client.Object) []ctrl.Request {
	if name := o.GetLabels()[addons.LabelClusterName]; name != "" {
		return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
	}
	return nil
}

// secretCluster maps a values Secret (labelled with its cluster) or a kubeconfig Secret
// (labelled by Cluster API) to its Cluster.
func secretCluster(ctx context.Context, o client.Object) []ctrl.Request {
	if name := o.GetLabels()[clusterv1.ClusterNameLabel]; name != "" && o.GetName() == secret.Name(name, secret.Kubeconfig) {
		return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
	}
	return labelledCluster(ctx, o)
}

// Reconcile brings one Cluster's packages to what its ClusterBootstrap says.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	tkrName := cluster.Labels[runv1alpha3.LabelTKR]
	if tkrName == "" {
		return ctrl.Result{}, nil
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, cluster)
	}
	// A Cluster paused by its user is left alone; one paused by the upgrade webhook is what
	// this controller must finish and unpause.
	if ptr.Deref(cluster.Spec.Paused, false) && cluster.Annotations[addons.AnnotationPaused] == "" {
		return ctrl.Result{}, nil
	}
	tkr := &runv1alpha3.TanzuKubernetesRelease{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: tkrName}, tkr); err != nil {
		// The release watch brings the Cluster back when it appears.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cb, err := r.clusterBootstrap(ctx, cluster, tkrName)
	if err != nil {
		return r.retry(ctx, err)
	}
	if cb == nil || cb.Spec.Paused {
		return ctrl.Result{}, nil
	}
	if !ptr.Deref(cluster.Status.Initialization.ControlPlaneInitialized, false) {
		// The Cluster's status change brings it back.
		return ctrl.Result{}, nil
	}
	if _, management := cluster.Labels[tkg.LabelManagementCluster]; !management {
		if err := r.installKappController(ctx, cluster, cb); err != nil {
			return r.retry(ctx, err)
		}
	}
	// An error is retried with the controller's backoff: controller-runtime ignores a
	// RequeueAfter returned with one.
	remote, err := r.remotes.get(ctx, r.Client, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.prepareRemote(ctx, remote); err != nil {
		return ctrl.Result{}, fmt.Errorf("cluster %s: %w", req.NamespacedName, err)
	}
	for _, pkg := range packagesOnRemote(cb) {
		if err := r.installRemote(ctx, cluster, pkg, remote); err != nil {
			return r.retry(ctx, err)
		}
	}
	// A workload cluster's additional packages are removed before it goes; a management
	// cluster's are not, as TKG's: it gets no finalizer, which a cleanup cluster without the
	// addons manager could not remove.
	if _, management := cluster.Labels[tkg.LabelManagementCluster]; !management && len(cb.Spec.AdditionalPackages) > 0 {
		if err := r.addFinalizers(ctx, cluster, cb); err != nil {
			return ctrl.Result{}, err
		}
	}
	settled, err := r.updateStatus(ctx, cluster, cb, remote)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.unpause(ctx, cluster, cb); err != nil {
		return ctrl.Result{}, err
	}
	if !settled {
		return ctrl.Result{RequeueAfter: r.StatusPeriod}, nil
	}
	return ctrl.Result{RequeueAfter: addons.PackageInstallSyncPeriod}, nil
}

// retry looks again later: soon and quietly when a package only waits for its values, with
// the controller's backoff on an error.
func (r *Reconciler) retry(ctx context.Context, err error) (ctrl.Result, error) {
	if isWaiting(err) {
		ctrl.LoggerFrom(ctx).Info(err.Error())
		return ctrl.Result{RequeueAfter: r.StatusPeriod}, nil
	}
	return ctrl.Result{}, err
}

// packagesOnRemote lists what the controller installs on the workload cluster, in order: CNI,
// CPI and CSI, then the additional packages. kapp-controller is installed from the management
// cluster.
func packagesOnRemote(cb *runv1alpha3.ClusterBootstrap) []*runv1alpha3.ClusterBootstrapPackage {
	var out []*runv1alpha3.ClusterBootstrapPackage
	for _, p := range addons.Packages(cb.Spec) {
		if p != cb.Spec.Kapp {
			out = append(out, p)
		}
	}
	return out
}

// clusterBootstrap returns the Cluster's ClusterBootstrap, cloning it from the release's
// template, completing a user's, or moving it to a new release. It returns nil while the
// Cluster waits for a user's ClusterBootstrap.
func (r *Reconciler) clusterBootstrap(ctx context.Context, cluster *clusterv1.Cluster, tkrName string) (*runv1alpha3.ClusterBootstrap, error) {
	cb := &runv1alpha3.ClusterBootstrap{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cb)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	found := err == nil
	if found && cb.Spec != nil && cb.Spec.Paused {
		return cb, nil
	}
	if found && cb.Status.ResolvedTKR == tkrName {
		// The release is unchanged: the ClusterBootstrap, user edits included, is the truth.
		return cb, nil
	}
	if !found {
		if _, custom := cluster.Annotations[runv1alpha3.AnnotationCustomClusterBootstrap]; custom {
			ctrl.LoggerFrom(ctx).Info("waiting for the user's ClusterBootstrap", "annotation", runv1alpha3.AnnotationCustomClusterBootstrap)
			return nil, nil
		}
		return r.createFromTemplate(ctx, cluster, tkrName)
	}
	if cb.Status.ResolvedTKR == "" {
		return r.adoptUsers(ctx, cluster, cb, tkrName)
	}
	return r.upgrade(ctx, cluster, cb, tkrName)
}

func (r *Reconciler) template(ctx context.Context, name string) (*runv1alpha3.ClusterBootstrapTemplate, error) {
	cbt := &runv1alpha3.ClusterBootstrapTemplate{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.SystemNamespace, Name: name}, cbt); err != nil {
		return nil, fmt.Errorf("ClusterBootstrapTemplate %s/%s: %w", r.SystemNamespace, name, err)
	}
	if cbt.Spec == nil {
		return nil, fmt.Errorf("ClusterBootstrapTemplate %s/%s has no spec", r.SystemNamespace, name)
	}
	return cbt, nil
}

func clusterController(cluster *clusterv1.Cluster) metav1.OwnerReference {
	ref := clusterOwner(cluster)
	ref.Controller, ref.BlockOwnerDeletion = ptr.To(true), ptr.To(true)
	return ref
}

// createFromTemplate clones the release's ClusterBootstrapTemplate, and what its packages'
// values come from, into the cluster's namespace.
func (r *Reconciler) createFromTemplate(ctx context.Context, cluster *clusterv1.Cluster, tkrName string) (*runv1alpha3.ClusterBootstrap, error) {
	cbt, err := r.template(ctx, tkrName)
	if err != nil {
		return nil, err
	}
	cb := &runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: cluster.Name,
		OwnerReferences: []metav1.OwnerReference{clusterController(cluster)}}, Spec: cbt.Spec.DeepCopy()}
	if err := r.dropForeignProviders(ctx, cluster, cb.Spec); err != nil {
		return nil, err
	}
	var cloned []client.Object
	for _, pkg := range addons.Packages(cb.Spec) {
		objs, err := r.cloneReferences(ctx, cluster, pkg, cbt.Namespace)
		if err != nil {
			return nil, err
		}
		cloned = append(cloned, objs...)
	}
	if err := r.Client.Create(ctx, cb); err != nil {
		return nil, fmt.Errorf("failed to create ClusterBootstrap %s/%s: %w", cb.Namespace, cb.Name, err)
	}
	return cb, r.resolved(ctx, cb, tkrName, cloned)
}

// dropForeignProviders leaves out of spec the CPI and CSI of another infrastructure than the
// cluster's, and logs what it left out.
func (r *Reconciler) dropForeignProviders(ctx context.Context, cluster *clusterv1.Cluster, spec *runv1alpha3.ClusterBootstrapTemplateSpec) error {
	dropped, err := addons.DropForeignProviders(ctx, r.Client, cluster, spec)
	if len(dropped) > 0 {
		ctrl.LoggerFrom(ctx).Info("Left out the packages of another infrastructure", "packages", dropped)
	}
	return err
}

// resolved records the release the ClusterBootstrap now follows and owns what was cloned for it.
func (r *Reconciler) resolved(ctx context.Context, cb *runv1alpha3.ClusterBootstrap, tkrName string, cloned []client.Object) error {
	if err := r.ownByClusterBootstrap(ctx, cb, cloned); err != nil {
		return err
	}
	patch := client.MergeFrom(cb.DeepCopy())
	cb.Status.ResolvedTKR = tkrName
	if err := r.Client.Status().Patch(ctx, cb, patch); err != nil {
		return fmt.Errorf("failed to set the resolved TKR of ClusterBootstrap %s/%s: %w", cb.Namespace, cb.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("ClusterBootstrap follows release", "tkr", tkrName)
	return nil
}

// adoptUsers takes over a ClusterBootstrap the user made. With the add-missing-fields
// annotation, what it leaves out comes from that release's template. Inline values become
// Secrets; a Secret or provider the user made in the cluster's namespace is used and becomes the
// Cluster's; one that exists only in the system namespace (named by the template) is cloned.
func (r *Reconciler) adoptUsers(ctx context.Context, cluster *clusterv1.Cluster, cb *runv1alpha3.ClusterBootstrap, tkrName string) (*runv1alpha3.ClusterBootstrap, error) {
	if cb.Spec == nil {
		return nil, fmt.Errorf("ClusterBootstrap %s/%s has no spec", cb.Namespace, cb.Name)
	}
	from := cb.Annotations[runv1alpha3.AnnotationAddMissingFieldsFromTKR]
	if from != "" {
		cbt, err := r.template(ctx, from)
		if err != nil {
			return nil, err
		}
		tkrName = from
		template := cbt.Spec.DeepCopy()
		if err := r.dropForeignProviders(ctx, cluster, template); err != nil {
			return nil, err
		}
		addons.AddMissingFields(template, cb.Spec)
	}
	var cloned []client.Object
	for _, p := range addons.Packages(cb.Spec) {
		vf := p.ValuesFrom
		if vf == nil {
			continue
		}
		var own client.Object
		switch {
		case vf.Inline != nil:
		case vf.SecretRef != "":
			s := &corev1.Secret{}
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cb.Namespace, Name: vf.SecretRef}, s); err == nil {
				own = s
			}
		case vf.ProviderRef != nil:
			provider, err := r.providerObject(vf.ProviderRef)
			if err != nil {
				return nil, err
			}
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cb.Namespace, Name: vf.ProviderRef.Name}, provider); err == nil {
				own = provider
			}
		}
		if own == nil && vf.Inline == nil && from == "" {
			return nil, &errWaiting{fmt.Sprintf("the values of package %s, named by ClusterBootstrap %s/%s, to be made in namespace %s",
				p.RefName, cb.Namespace, cb.Name, cb.Namespace)}
		}
		if own == nil {
			objs, err := r.cloneReferences(ctx, cluster, p, r.SystemNamespace)
			if err != nil {
				return nil, err
			}
			cloned = append(cloned, objs...)
			continue
		}
		if err := r.adopt(ctx, cluster, p, own); err != nil {
			return nil, err
		}
	}
	cb.OwnerReferences = util.EnsureOwnerRef(cb.OwnerReferences, clusterController(cluster))
	if err := r.Client.Update(ctx, cb); err != nil {
		return nil, fmt.Errorf("failed to adopt ClusterBootstrap %s/%s: %w", cb.Namespace, cb.Name, err)
	}
	return cb, r.resolved(ctx, cb, tkrName, cloned)
}

// upgrade moves a ClusterBootstrap to a new release: every package takes the new template's
// version of the same package and keeps its valuesFrom; packages new in the template are added
// with their values cloned; packages the template dropped stay.
func (r *Reconciler) upgrade(ctx context.Context, cluster *clusterv1.Cluster, cb *runv1alpha3.ClusterBootstrap, tkrName string) (*runv1alpha3.ClusterBootstrap, error) {
	cbt, err := r.template(ctx, tkrName)
	if err != nil {
		return nil, err
	}
	ctrl.LoggerFrom(ctx).Info("upgrading ClusterBootstrap", "from", cb.Status.ResolvedTKR, "to", tkrName)
	patch := client.MergeFrom(cb.DeepCopy())
	var added []*runv1alpha3.ClusterBootstrapPackage
	// A package the cluster has follows the new template; of those it lacks, another
	// infrastructure's CPI and CSI are not added.
	template := cbt.Spec.DeepCopy()
	if err := r.dropForeignProviders(ctx, cluster, template); err != nil {
		return nil, err
	}
	core, templateCore, addable := addons.Core(cb.Spec), addons.Core(cbt.Spec), addons.Core(template)
	for _, name := range addons.CorePackages {
		p, t := core[name], *templateCore[name]
		switch {
		case t == nil:
		case *p == nil && *addable[name] != nil:
			*p = t.DeepCopy()
			added = append(added, *p)
		case *p != nil:
			(*p).RefName = t.RefName
		}
	}
	for _, t := range template.AdditionalPackages {
		found := false
		for _, p := range cb.Spec.AdditionalPackages {
			if addons.ShortName(p.RefName) == addons.ShortName(t.RefName) {
				p.RefName, found = t.RefName, true
			}
		}
		if !found {
			p := t.DeepCopy()
			cb.Spec.AdditionalPackages = append(cb.Spec.AdditionalPackages, p)
			added = append(added, p)
		}
	}
	var cloned []client.Object
	for _, p := range added {
		objs, err := r.cloneReferences(ctx, cluster, p, cbt.Namespace)
		if err != nil {
			return nil, err
		}
		cloned = append(cloned, objs...)
	}
	if err := r.Client.Patch(ctx, cb, patch); err != nil {
		return nil, fmt.Errorf("failed to update ClusterBootstrap %s/%s to %s: %w", cb.Namespace, cb.Name, tkrName, err)
	}
	return cb, r.resolved(ctx, cb, tkrName, cloned)
}

// unpause lifts the pause the upgrade webhook set, once the ClusterBootstrap follows the release
// the Cluster was paused for.
func (r *Reconciler) unpause(ctx context.Context, cluster *clusterv1.Cluster, cb *runv1alpha3.ClusterBootstrap) error {
	want, ok := cluster.Annotations[addons.AnnotationPaused]
	if !ok || want != cb.Status.ResolvedTKR {
		return nil
	}
	patch := client.MergeFrom(cluster.DeepCopy())
	delete(cluster.Annotations, addons.AnnotationPaused)
	cluster.Spec.Paused = ptr.To(false)
	if err := r.Client.Patch(ctx, cluster, patch); err != nil {
		return fmt.Errorf("failed to unpause cluster %s/%s: %w", cluster.Namespace, cluster.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("unpaused the cluster: its packages follow the new release", "tkr", want)
	return nil
}

// addFinalizers holds the Cluster, its kubeconfig Secret and its ClusterBootstrap until the
// additional packages are removed from the workload cluster.
func (r *Reconciler) addFinalizers(ctx context.Context, cluster *clusterv1.Cluster, cb *runv1alpha3.ClusterBootstrap) error {
	kubeconfig := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: secret.Name(cluster.Name, secret.Kubeconfig)}, kubeconfig); err != nil {
		return err
	}
	for _, o := range []client.Object{cluster, kubeconfig, cb} {
		if controllerutil.ContainsFinalizer(o, addons.Finalizer) {
			continue
		}
		patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
		controllerutil.AddFinalizer(o, addons.Finalizer)
		if err := r.Client.Patch(ctx, o, patch); err != nil {
			return fmt.Errorf("failed to add finalizer to %s: %w", o.GetName(), err)
		}
	}
	return nil
}
