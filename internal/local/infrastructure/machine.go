package infrastructure

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
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

// MachineReconciler reconciles LocalMachines.
type MachineReconciler struct {
	Client  client.Client
	Runtime *Runtime
	// Recorder records an Event for each restarted node.
	Recorder events.EventRecorder
	// WatchFilterValue is Cluster API's --watch-filter label value; empty reconciles all.
	WatchFilterValue string
}

// SetupWithManager registers the reconciler.
func (r *MachineReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	log := ctrl.LoggerFrom(ctx)
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.LocalMachine{}).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)).
		Watches(&clusterv1.Machine{},
			handler.EnqueueRequestsFromMapFunc(util.MachineToInfrastructureMapFunc(infrav1.GroupVersion.WithKind("LocalMachine")))).
		Watches(&infrav1.LocalCluster{}, handler.EnqueueRequestsFromMapFunc(r.localClusterToMachines)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToMachines),
			builder.WithPredicates(pauseTransitions(mgr.GetScheme(), log))).
		Complete(r)
}

func (r *MachineReconciler) clusterToMachines(ctx context.Context, o client.Object) []ctrl.Request {
	list := &infrav1.LocalMachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: o.GetName()}); err != nil {
		return nil
	}
	var reqs []ctrl.Request
	for _, m := range list.Items {
		reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
	}
	return reqs
}

func (r *MachineReconciler) localClusterToMachines(ctx context.Context, o client.Object) []ctrl.Request {
	name, ok := o.GetLabels()[clusterv1.ClusterNameLabel]
	if !ok {
		return nil
	}
	c := &clusterv1.Cluster{}
	c.SetNamespace(o.GetNamespace())
	c.SetName(name)
	return r.clusterToMachines(ctx, c)
}

// Reconcile starts the machine's node once its cluster's infrastructure is provisioned and its
// bootstrap data is ready, reports providerID and addresses, restarts a node whose init process
// died (a host restart), and stops the node when the machine is deleted.
func (r *MachineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	lm := &infrav1.LocalMachine{}
	if err := r.Client.Get(ctx, req.NamespacedName, lm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	machine, err := util.GetOwnerMachine(ctx, r.Client, lm.ObjectMeta)
	if err != nil || machine == nil {
		return ctrl.Result{}, err
	}
	owner, err := util.GetClusterFromMetadata(ctx, r.Client, machine.ObjectMeta)
	if err != nil {
		return ctrl.Result{}, err
	}
	closePass, err := openPass(ctx, r.Client, owner, lm, infrav1.MachineFinalizer, infrav1.ReadyCondition, infrav1.NodeStartedCondition)
	if closePass == nil {
		return ctrl.Result{}, err
	}
	defer closePass(&reterr)
	if !lm.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.delete(ctx, owner, machine, lm)
	}
	if !ptr.Deref(owner.Status.Initialization.InfrastructureProvisioned, false) {
		setNodeConditions(lm, metav1.ConditionFalse, infrav1.ReasonWaitingForClusterReady, "waiting for the LocalCluster to be provisioned")
		return ctrl.Result{}, nil
	}
	if machine.Spec.Bootstrap.DataSecretName == nil {
		setNodeConditions(lm, metav1.ConditionFalse, infrav1.ReasonWaitingForBootstrapData, "waiting for the Machine's bootstrap data")
		return ctrl.Result{}, nil
	}
	uid, err := madeForOf(ctx, r.Client, owner)
	if err != nil {
		return ctrl.Result{}, err
	}
	node, err := r.ensureNode(ctx, owner, uid, machine, lm)
	var limit *hostLimitError
	if errors.As(err, &limit) {
		// Not a failure of the node: it starts when the limit is raised or a cluster goes.
		setNodeConditions(lm, metav1.ConditionFalse, infrav1.ReasonHostLimitReached, limit.Error())
		r.Recorder.Eventf(lm, machine, corev1.EventTypeWarning, infrav1.ReasonHostLimitReached, "Start", "%v", limit)
		return ctrl.Result{RequeueAfter: hostLimitRetry}, nil
	}
	if err != nil {
		setNodeConditions(lm, metav1.ConditionFalse, infrav1.ReasonNodeStartFailed, err.Error())
		if errors.Is(err, reconcile.TerminalError(nil)) {
			r.Recorder.Eventf(lm, machine, corev1.EventTypeWarning, infrav1.ReasonNodeStartFailed, "Start", "%v", err)
		}
		return ctrl.Result{}, err
	}
	lm.Spec.ProviderID = node.ProviderID
	lm.Status.NodeIP = node.IP
	lm.Status.Addresses = []clusterv1.MachineAddress{
		{Type: clusterv1.MachineHostName, Address: node.Name},
		{Type: clusterv1.MachineInternalIP, Address: node.IP},
	}
	lm.Status.Initialization.Provisioned = ptr.To(true)
	setNodeConditions(lm, metav1.ConditionTrue, infrav1.ReasonNodeStarted,
		fmt.Sprintf("node %s runs on %s (Kubernetes %s)", node.Name, node.IP, node.KubernetesVersion))
	// The node is looked at again within superviseEvery, so that a killed init process, or a
	// node stopped by a host restart, is back within seconds.
	return ctrl.Result{RequeueAfter: superviseEvery}, nil
}

// ensureNode adds the machine's node to the cluster from its bootstrap data and starts it, or
// restarts the init process of a node that exists and does not run, counting the restart in lm.
func (r *MachineReconciler) ensureNode(ctx context.Context, owner *clusterv1.Cluster, uid string, machine *clusterv1.Machine, lm *infrav1.LocalMachine) (cluster.NodeSpec, error) {
	r.Runtime.mu.Lock()
	spec, err := r.Runtime.ownedSpec(ctx, owner, uid)
	r.Runtime.mu.Unlock()
	if err != nil {
		return cluster.NodeSpec{}, err
	}
	if node, ok := spec.Node(machine.Name); ok {
		restarted, err := r.Runtime.Host.StartNode(ctx, owner.Name, node)
		if restarted && ptr.Deref(lm.Status.Initialization.Provisioned, false) {
			lm.Status.NodeRestarts++
			r.Recorder.Eventf(lm, nil, corev1.EventTypeWarning, "NodeRestarted", "Restart",
				"The init process of node %s was not running: started it again (restart %d)", node.Name, lm.Status.NodeRestarts)
			ctrl.LoggerFrom(ctx).Info("Restarted the node", "node", node.Name, "restarts", lm.Status.NodeRestarts)
		}
		return node, err
	}
	b, err := r.readBootstrap(ctx, machine)
	if err != nil {
		return cluster.NodeSpec{}, err
	}
	controlPlanes, workers := 0, 1
	if b.ControlPlane {
		controlPlanes, workers = 1, 0
	}
	if err := r.Runtime.Host.CheckHostLimits(ctx, controlPlanes, workers, func(msg string) {
		r.Recorder.Eventf(lm, machine, corev1.EventTypeNormal, infrav1.ReasonHostLimitRaised, "Raise", "%s", msg)
	}); err != nil {
		return cluster.NodeSpec{}, &hostLimitError{err}
	}
	version := machine.Spec.Version
	if b.Init && b.KubernetesVersion != "" {
		version = b.KubernetesVersion
	}
	// A node pulls its images from the local registry and runs the kubelet and kubeadm of its
	// version: what it lacks is said before the node is made.
	registryAddr, err := r.Runtime.Host.EnsureNodeImage(ctx, version)
	if err != nil {
		return cluster.NodeSpec{}, err
	}
	var node cluster.NodeSpec
	spec, err = r.Runtime.update(ctx, owner, uid, func(spec *cluster.Spec) error {
		role := cluster.RoleWorker
		if b.ControlPlane {
			role = cluster.RoleControlPlane
		}
		if b.Init && len(spec.ControlPlane()) > 0 {
			return fmt.Errorf("bootstrap data runs kubeadm init but cluster %s already has a control plane", spec.Name)
		}
		if spec.KubernetesVersion == "" || b.Init {
			spec.KubernetesVersion = version
		}
		var err error
		if node, err = spec.AddNode(machine.Name, role); err != nil {
			return err
		}
		node.KubernetesVersion = version
		node.ProviderID = fmt.Sprintf("%s%s/%s", infrav1.ProviderIDPrefix, machine.Namespace, machine.Name)
		node.Init = b.Init
		node.Join = b.ControlPlane && !b.Init
		spec.Nodes[len(spec.Nodes)-1] = node
		return r.Runtime.Host.PrepareNode(ctx, spec, node, b.UserData, registryAddr)
	})
	if err != nil {
		return cluster.NodeSpec{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Starting node", "node", node.Name, "role", node.Role, "version", node.KubernetesVersion, "init", node.Init, "join", node.Join, "ip", node.IP)
	_, err = r.Runtime.Host.StartNode(ctx, spec.Name, node)
	return node, err
}

// readBootstrap reads the machine's bootstrap data.
func (r *MachineReconciler) readBootstrap(ctx context.Context, machine *clusterv1.Machine) (*Bootstrap, error) {
	data := &corev1.Secret{}
	key := client.ObjectKey{Namespace: machine.Namespace, Name: *machine.Spec.Bootstrap.DataSecretName}
	if err := r.Client.Get(ctx, key, data); err != nil {
		return nil, fmt.Errorf("failed to read bootstrap data %s: %w", key, err)
	}
	b, err := ParseBootstrap(data.Data["value"], string(data.Data["format"]))
	if err != nil {
		// Bootstrap data is written once: retrying cannot help.
		return nil, reconcile.TerminalError(fmt.Errorf("bootstrap data %s: %w", key, err))
	}
	return b, nil
}

// delete stops the machine's node and removes it from the cluster.
func (r *MachineReconciler) delete(ctx context.Context, owner *clusterv1.Cluster, machine *clusterv1.Machine, lm *infrav1.LocalMachine) error {
	setNodeConditions(lm, metav1.ConditionFalse, infrav1.ReasonDeleting, "")
	uid, err := madeForOf(ctx, r.Client, owner)
	if apierrors.IsNotFound(errors.Unwrap(err)) {
		// The LocalCluster is gone: so is the local cluster, with its nodes.
		controllerutil.RemoveFinalizer(lm, infrav1.MachineFinalizer)
		return nil
	}
	if err != nil {
		return err
	}
	r.Runtime.mu.Lock()
	spec, err := r.Runtime.ownedSpec(ctx, owner, uid)
	r.Runtime.mu.Unlock()
	if err == nil {
		if _, ok := spec.Node(machine.Name); ok {
			start := time.Now()
			if err := r.Runtime.Host.StopNode(ctx, owner.Name, machine.Name); err != nil {
				return err
			}
			if _, err := r.Runtime.update(ctx, owner, uid, func(spec *cluster.Spec) error {
				spec.RemoveNode(machine.Name)
				return nil
			}); err != nil {
				return err
			}
			ctrl.LoggerFrom(ctx).Info("Stopped node", "node", machine.Name, "after", time.Since(start).Round(time.Millisecond).String())
		}
	}
	controllerutil.RemoveFinalizer(lm, infrav1.MachineFinalizer)
	return nil
}

// hostLimitError is a node that the host cannot start yet.
type hostLimitError struct{ err error }

func (e *hostLimitError) Error() string { return e.err.Error() }
func (e *hostLimitError) Unwrap() error { return e.err }

// hostLimitRetry is how often a node the host could not start is tried again.
const hostLimitRetry = 30 * time.Second

// setNodeConditions sets NodeStarted and Ready, which say the same of a LocalMachine.
func setNodeConditions(lm *infrav1.LocalMachine, status metav1.ConditionStatus, reason, message string) {
	for _, t := range []string{infrav1.NodeStartedCondition, infrav1.ReadyCondition} {
		conditions.Set(lm, metav1.Condition{Type: t, Status: status, Reason: reason, Message: message})
	}
}
