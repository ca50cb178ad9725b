package ipam

import (
	"context"
	"net/netip"
	"reflect"

	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ipamv1alpha2 "github.com/slipway-dev/slipway/api/ipam/v1alpha2"
)

// PoolReconciler counts the addresses of the pools of one kind (KindPool or KindGlobalPool).
type PoolReconciler struct {
	Client client.Client
	Kind   string
}

func (r *PoolReconciler) newPool() client.Object {
	if r.Kind == KindGlobalPool {
		return &ipamv1alpha2.GlobalInClusterIPPool{}
	}
	return &ipamv1alpha2.InClusterIPPool{}
}

// parts returns a pool's spec and status.
func parts(o client.Object) (*ipamv1alpha2.InClusterIPPoolSpec, *ipamv1alpha2.InClusterIPPoolStatus) {
	switch p := o.(type) {
	case *ipamv1alpha2.GlobalInClusterIPPool:
		return &p.Spec, &p.Status
	case *ipamv1alpha2.InClusterIPPool:
		return &p.Spec, &p.Status
	}
	panic("not a pool")
}

// SetupWithManager registers the controller; an address assigned or released recounts its pool.
func (r *PoolReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(r.newPool()).
		Watches(&ipamv1.IPAddress{}, handler.EnqueueRequestsFromMapFunc(r.poolOfAddress)).
		Named(r.Kind).
		Complete(r)
}

func (r *PoolReconciler) poolOfAddress(_ context.Context, o client.Object) []reconcile.Request {
	a, ok := o.(*ipamv1.IPAddress)
	if !ok || a.Spec.PoolRef.APIGroup != ipamv1alpha2.GroupVersion.Group || a.Spec.PoolRef.Kind != r.Kind {
		return nil
	}
	key := client.ObjectKey{Namespace: a.Namespace, Name: a.Spec.PoolRef.Name}
	if r.Kind == KindGlobalPool {
		key.Namespace = ""
	}
	return []reconcile.Request{{NamespacedName: key}}
}

// Reconcile writes a pool's counts.
func (r *PoolReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newPool()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	spec, status := parts(obj)
	p, err := parsePool(*spec)
	if err != nil {
		// Claims naming the pool say why; there is nothing to count.
		ctrl.LoggerFrom(ctx).Info("Pool is invalid", "reason", err.Error())
		return ctrl.Result{}, nil
	}
	var opts []client.ListOption
	if req.Namespace != "" {
		opts = append(opts, client.InNamespace(req.Namespace))
	}
	ref := ipamv1.IPPoolReference{APIGroup: ipamv1alpha2.GroupVersion.Group, Kind: r.Kind, Name: req.Name}
	assigned, err := addressesOf(ctx, r.Client, ref, opts)
	if err != nil {
		return ctrl.Result{}, err
	}
	counts := &ipamv1alpha2.InClusterIPPoolStatusIPAddresses{Total: p.total(), Used: len(assigned)}
	for _, a := range assigned {
		if addr, err := netip.ParseAddr(a.Spec.Address); err != nil || !p.contains(addr) || !p.assignable(addr) {
			counts.OutOfRange++
		}
	}
	counts.Free = max(counts.Total-(counts.Used-counts.OutOfRange), 0)
	if reflect.DeepEqual(status.Addresses, counts) {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	status.Addresses = counts
	return ctrl.Result{}, r.Client.Status().Patch(ctx, obj, patch)
}
