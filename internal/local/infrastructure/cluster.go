package infrastructure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	"github.com/slipway-dev/slipway/internal/local/cluster"
)

// Runtime is the local runtime the provider makes clusters in: its host, which the provider is
// on or reaches through the host's node service. Spec changes of one cluster are serialised by
// it.
type Runtime struct {
	Host cluster.Host
	// Home is the local cluster the provider runs in: the clusters it makes are deleted with it.
	Home string
	mu   sync.Mutex
}

// ownedSpec returns the spec of the local cluster that belongs to a Cluster API Cluster, made
// for the Cluster UID uid (see madeFor), and fails when a cluster of that name belongs to
// something else.
func (r *Runtime) ownedSpec(ctx context.Context, c *clusterv1.Cluster, uid string) (*cluster.Spec, error) {
	spec, err := r.Host.ReadSpec(ctx, c.Name)
	if err != nil {
		return nil, err
	}
	if spec.Owner == nil || spec.Owner.UID != uid {
		return nil, fmt.Errorf("local cluster %q already exists and does not belong to Cluster %s: "+
			"delete it with `slipway local cluster delete %s` or give the Cluster another name", c.Name, klog.KObj(c), c.Name)
	}
	return spec, nil
}

// madeFor is the UID of the Cluster whose local cluster lc stands for: the UID the Cluster had
// when the provider made the local cluster, which the LocalCluster keeps in an annotation
// through clusterctl move (move gives every object a new UID), else the Cluster's own UID.
func madeFor(c *clusterv1.Cluster, lc *infrav1.LocalCluster) string {
	if uid := lc.Annotations[infrav1.ClusterUIDAnnotation]; uid != "" {
		return uid
	}
	return string(c.UID)
}

// madeForOf reads the LocalCluster of c and returns madeFor.
func madeForOf(ctx context.Context, cl client.Client, c *clusterv1.Cluster) (string, error) {
	lc := &infrav1.LocalCluster{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Spec.InfrastructureRef.Name}, lc); err != nil {
		return "", fmt.Errorf("failed to read the LocalCluster of Cluster %s: %w", klog.KObj(c), err)
	}
	return madeFor(c, lc), nil
}

// update applies change to a cluster's spec under the runtime's lock.
func (r *Runtime) update(ctx context.Context, c *clusterv1.Cluster, uid string, change func(*cluster.Spec) error) (*cluster.Spec, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	spec, err := r.ownedSpec(ctx, c, uid)
	if err != nil {
		return nil, err
	}
	if err := change(spec); err != nil {
		return nil, err
	}
	return spec, r.Host.WriteSpec(ctx, spec)
}

// superviseEvery is how often the provider looks at each process it runs for its clusters (load
// balancers and nodes' init processes) and starts a dead one again.
const superviseEvery = 3 * time.Second

// ClusterReconciler reconciles LocalClusters.
type ClusterReconciler struct {
	Client  client.Client
	Runtime *Runtime
	// Recorder records an Event for each restarted load balancer.
	Recorder events.EventRecorder
	// WatchFilterValue is Cluster API's --watch-filter label value; empty reconciles all.
	WatchFilterValue string
}

// SetupWithManager registers the reconciler.
func (r *ClusterReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	log := ctrl.LoggerFrom(ctx)
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.LocalCluster{}).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)).
		Watches(&clusterv1.Cluster{},
			handler.EnqueueRequestsFromMapFunc(util.ClusterToInfrastructureMapFunc(ctx, infrav1.GroupVersion.WithKind("LocalCluster"), mgr.GetClient(), &infrav1.LocalCluster{})),
			builder.WithPredicates(pauseTransitions(mgr.GetScheme(), log))).
		Complete(r)
}

// Reconcile allocates the cluster's address block and runs its load balancer, which is the
// control-plane endpoint; on delete it stops whatever of the cluster is left.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	lc := &infrav1.LocalCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, lc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	owner, err := util.GetOwnerCluster(ctx, r.Client, lc.ObjectMeta)
	if err != nil || owner == nil {
		// Cluster API sets the owner reference; until then there is nothing to do.
		return ctrl.Result{}, err
	}
	closePass, err := openPass(ctx, r.Client, owner, lc, infrav1.ClusterFinalizer, infrav1.ReadyCondition)
	if closePass == nil {
		return ctrl.Result{}, err
	}
	defer closePass(&reterr)
	if !lc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.delete(ctx, owner, lc)
	}
	spec, err := r.ensureSpec(ctx, owner, madeFor(owner, lc), lc.Spec.HostRegistries)
	if err != nil {
		conditions.Set(lc, metav1.Condition{Type: infrav1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "EndpointAllocationFailed", Message: err.Error()})
		return ctrl.Result{}, err
	}
	started, err := r.Runtime.Host.StartLoadBalancer(ctx, owner.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if started && ptr.Deref(lc.Status.Initialization.Provisioned, false) {
		lc.Status.LoadBalancerRestarts++
		r.Recorder.Eventf(lc, nil, corev1.EventTypeWarning, "LoadBalancerRestarted", "Restart",
			"The load balancer of %s on %s was not running: started it again (restart %d)", owner.Name, spec.Endpoint(), lc.Status.LoadBalancerRestarts)
		ctrl.LoggerFrom(ctx).Info("Restarted the load balancer", "Cluster", klog.KObj(owner), "restarts", lc.Status.LoadBalancerRestarts)
	}
	// The LocalCluster keeps the UID its local cluster was made for, so that ownership follows
	// the Cluster through clusterctl move.
	if lc.Annotations[infrav1.ClusterUIDAnnotation] == "" {
		if lc.Annotations == nil {
			lc.Annotations = map[string]string{}
		}
		lc.Annotations[infrav1.ClusterUIDAnnotation] = spec.Owner.UID
	}
	lc.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: spec.LoadBalancerIP, Port: cluster.APIServerPort}
	lc.Status.Index = int32(spec.Index)
	lc.Status.Initialization.Provisioned = ptr.To(true)
	conditions.Set(lc, metav1.Condition{Type: infrav1.ReadyCondition, Status: metav1.ConditionTrue, Reason: infrav1.ReasonEndpointAllocated,
		Message: fmt.Sprintf("endpoint %s, nodes in %s", spec.Endpoint(), spec.NodeNetwork())})
	// The load balancer is looked at again within superviseEvery, so that a dead one is back
	// within seconds.
	return ctrl.Result{RequeueAfter: superviseEvery}, nil
}

// ensureSpec creates the local cluster of a Cluster the first time, in the lowest free block,
// its nodes pulling from hostRegistries too; a Cluster that moved to another management cluster
// takes its local cluster with it, and a change of hostRegistries is kept for the nodes made
// after it.
func (r *ClusterReconciler) ensureSpec(ctx context.Context, owner *clusterv1.Cluster, uid string, hostRegistries []string) (*cluster.Spec, error) {
	r.Runtime.mu.Lock()
	defer r.Runtime.mu.Unlock()
	if err := cluster.ValidateName(owner.Name); err != nil {
		return nil, fmt.Errorf("the local runtime cannot run Cluster %s: %w", klog.KObj(owner), err)
	}
	switch _, err := r.Runtime.Host.ReadSpec(ctx, owner.Name); {
	case err == nil:
		spec, err := r.Runtime.ownedSpec(ctx, owner, uid)
		if err != nil || (spec.Owner.ManagementCluster == r.Runtime.Home && slices.Equal(spec.HostRegistries, hostRegistries)) {
			return spec, err
		}
		// The Cluster moved to another management cluster (the cluster now goes with that one),
		// or its registries changed.
		spec.Owner.ManagementCluster = r.Runtime.Home
		spec.HostRegistries = hostRegistries
		return spec, r.Runtime.Host.WriteSpec(ctx, spec)
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	index, err := r.Runtime.Host.FreeIndex(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkPodCIDRs(owner); err != nil {
		return nil, err
	}
	spec := cluster.NewOwnedSpec(owner.Name, "", index, cluster.Owner{Namespace: owner.Namespace, Name: owner.Name, UID: string(owner.UID),
		ManagementCluster: r.Runtime.Home})
	spec.HostRegistries = hostRegistries
	return spec, r.Runtime.Host.WriteSpec(ctx, spec)
}

// checkPodCIDRs refuses a Cluster without pod CIDRs: without them the controller manager gives
// no node a pod CIDR, the nodes' pod network is made of them, and no node would get Ready.
func checkPodCIDRs(owner *clusterv1.Cluster) error {
	if len(owner.Spec.ClusterNetwork.Pods.CIDRBlocks) == 0 {
		return reconcile.TerminalError(fmt.Errorf("the nodes need the Cluster's spec.clusterNetwork.pods.cidrBlocks, which their pod network is made of, and Cluster %s has none: set it (TKG's CLUSTER_CIDR is 100.96.0.0/11)",
			klog.KObj(owner)))
	}
	return nil
}

// delete stops what is left of the cluster (Cluster API deletes the machines first) and
// removes its state.
func (r *ClusterReconciler) delete(ctx context.Context, owner *clusterv1.Cluster, lc *infrav1.LocalCluster) error {
	conditions.Set(lc, metav1.Condition{Type: infrav1.ReadyCondition, Status: metav1.ConditionFalse, Reason: infrav1.ReasonDeleting})
	// Only the ownership check is under the runtime's lock: stopping the processes takes seconds
	// and must not hold up the machines of other clusters.
	r.Runtime.mu.Lock()
	_, err := r.Runtime.ownedSpec(ctx, owner, madeFor(owner, lc))
	r.Runtime.mu.Unlock()
	if err == nil {
		if err := r.Runtime.Host.Delete(ctx, owner.Name); err != nil && !errors.Is(err, cluster.ErrNotFound) {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("Deleted the local cluster", "Cluster", klog.KObj(owner))
	} else if !errors.Is(err, os.ErrNotExist) {
		ctrl.LoggerFrom(ctx).Info("Leaving a local cluster that is not this Cluster's", "reason", err.Error())
	}
	controllerutil.RemoveFinalizer(lc, infrav1.ClusterFinalizer)
	return nil
}
