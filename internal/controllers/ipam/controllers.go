package ipam

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ipamv1alpha2 "github.com/slipway-dev/slipway/api/ipam/v1alpha2"
)

// The kinds of pool a claim's poolRef may name.
const (
	KindPool       = "InClusterIPPool"
	KindGlobalPool = "GlobalInClusterIPPool"
)

// Reasons of a claim's Ready condition.
const (
	ReasonAllocated    = "Allocated"
	ReasonPoolNotFound = "PoolNotFound"
	ReasonPoolInvalid  = "PoolInvalid"
	ReasonPoolFull     = "PoolExhausted"
)

// poolOf returns the spec of the pool a claim names, with what to list its addresses by.
func poolOf(ctx context.Context, c client.Reader, namespace string, ref ipamv1.IPPoolReference) (ipamv1alpha2.InClusterIPPoolSpec, []client.ListOption, error) {
	if ref.Kind == KindGlobalPool {
		p := &ipamv1alpha2.GlobalInClusterIPPool{}
		err := c.Get(ctx, client.ObjectKey{Name: ref.Name}, p)
		return p.Spec, nil, err
	}
	p := &ipamv1alpha2.InClusterIPPool{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, p)
	return p.Spec, []client.ListOption{client.InNamespace(namespace)}, err
}

// isOurs says whether a pool reference names one of this provider's pools.
func isOurs(ref ipamv1.IPPoolReference) bool {
	return ref.APIGroup == ipamv1alpha2.GroupVersion.Group && (ref.Kind == KindPool || ref.Kind == KindGlobalPool)
}

// addressesOf lists the IPAddresses assigned from a pool, read from the API server rather than a
// cache, so that two claims never get one address.
func addressesOf(ctx context.Context, c client.Reader, ref ipamv1.IPPoolReference, opts []client.ListOption) ([]ipamv1.IPAddress, error) {
	list := &ipamv1.IPAddressList{}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	var out []ipamv1.IPAddress
	for _, a := range list.Items {
		if a.Spec.PoolRef.APIGroup == ref.APIGroup && a.Spec.PoolRef.Kind == ref.Kind && a.Spec.PoolRef.Name == ref.Name {
			out = append(out, a)
		}
	}
	return out, nil
}

// ClaimReconciler assigns addresses to IPAddressClaims that name this provider's pools.
type ClaimReconciler struct {
	Client client.Client
	// APIReader reads the addresses in use without a cache.
	APIReader client.Reader
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller with one worker: claims are served one at a time.
func (r *ClaimReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("ipam-controller")
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&ipamv1.IPAddressClaim{}).
		Owns(&ipamv1.IPAddress{}).
		Watches(&ipamv1alpha2.InClusterIPPool{}, handler.EnqueueRequestsFromMapFunc(r.claimsOfPool)).
		Watches(&ipamv1alpha2.GlobalInClusterIPPool{}, handler.EnqueueRequestsFromMapFunc(r.claimsOfPool)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.claimsOfCluster)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Named("ipaddressclaim").
		Complete(r)
}

// claimsOfPool maps a pool to its claims that have no address yet.
func (r *ClaimReconciler) claimsOfPool(ctx context.Context, pool client.Object) []reconcile.Request {
	claims := &ipamv1.IPAddressClaimList{}
	var opts []client.ListOption
	if pool.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(pool.GetNamespace()))
	}
	if err := r.Client.List(ctx, claims, opts...); err != nil {
		return nil
	}
	var requests []reconcile.Request
	for _, c := range claims.Items {
		if c.Spec.PoolRef.Name == pool.GetName() && isOurs(c.Spec.PoolRef) && c.Status.AddressRef.Name == "" {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
		}
	}
	return requests
}

// claimsOfCluster maps a Cluster to its claims without an address, so that a claim held while
// its cluster was paused is served when it resumes.
func (r *ClaimReconciler) claimsOfCluster(ctx context.Context, cluster client.Object) []reconcile.Request {
	claims := &ipamv1.IPAddressClaimList{}
	if err := r.Client.List(ctx, claims, client.InNamespace(cluster.GetNamespace())); err != nil {
		return nil
	}
	var requests []reconcile.Request
	for _, c := range claims.Items {
		if clusterOf(&c) == cluster.GetName() && isOurs(c.Spec.PoolRef) && c.Status.AddressRef.Name == "" {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
		}
	}
	return requests
}

// clusterOf names the Cluster a claim is for: spec.clusterName, else Cluster API's label.
func clusterOf(claim *ipamv1.IPAddressClaim) string {
	if claim.Spec.ClusterName != "" {
		return claim.Spec.ClusterName
	}
	return claim.Labels[clusterv1.ClusterNameLabel]
}

// paused says whether a claim is left alone, as Cluster API's providers leave what clusterctl
// move pauses: the claim carries the paused annotation, or its Cluster is paused.
func (r *ClaimReconciler) paused(ctx context.Context, claim *ipamv1.IPAddressClaim) (bool, error) {
	if annotations.HasPaused(claim) {
		return true, nil
	}
	name := clusterOf(claim)
	if name == "" {
		return false, nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: claim.Namespace, Name: name}, cluster); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return ptr.Deref(cluster.Spec.Paused, false), nil
}

// Reconcile gives a claim an address, named as the claim, or says why it cannot. The claim's
// status is written once, when the pass ends, and a change of its Ready condition is an Event.
func (r *ClaimReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	claim := &ipamv1.IPAddressClaim{}
	if err := r.Client.Get(ctx, req.NamespacedName, claim); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ref := claim.Spec.PoolRef
	if !isOurs(ref) || !claim.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if paused, err := r.paused(ctx, claim); err != nil || paused {
		return ctrl.Result{}, err
	}
	before := claim.DeepCopy()
	var ip string
	defer func() {
		if err := r.writeStatus(ctx, before, claim, ip); err != nil && reterr == nil {
			reterr = err
		}
	}()
	address := &ipamv1.IPAddress{}
	err := r.APIReader.Get(ctx, req.NamespacedName, address)
	switch {
	case apierrors.IsNotFound(err):
		spec, opts, err := poolOf(ctx, r.APIReader, claim.Namespace, ref)
		if apierrors.IsNotFound(err) {
			setReady(claim, "", ReasonPoolNotFound, fmt.Sprintf("%s %s does not exist: create it, or name an existing pool in spec.poolRef", ref.Kind, ref.Name))
			return ctrl.Result{}, nil
		} else if err != nil {
			return ctrl.Result{}, err
		}
		if address, err = r.allocate(ctx, claim, spec, opts); err != nil || address == nil {
			return ctrl.Result{}, err
		}
		ctrl.LoggerFrom(ctx).Info("Assigned address", "address", address.Spec.Address, ref.Kind, ref.Name)
	case err != nil:
		return ctrl.Result{}, err
	}
	ip = address.Spec.Address
	setReady(claim, address.Name, ReasonAllocated, "")
	return ctrl.Result{}, nil
}

// allocate creates the claim's IPAddress from the pool; it returns nil, having set why on the
// claim's Ready condition, when the pool is invalid or full.
func (r *ClaimReconciler) allocate(ctx context.Context, claim *ipamv1.IPAddressClaim, spec ipamv1alpha2.InClusterIPPoolSpec, opts []client.ListOption) (*ipamv1.IPAddress, error) {
	ref := claim.Spec.PoolRef
	p, err := parsePool(spec)
	if err != nil {
		setReady(claim, "", ReasonPoolInvalid, fmt.Sprintf("%s %s: %v", ref.Kind, ref.Name, err))
		return nil, nil
	}
	assigned, err := addressesOf(ctx, r.APIReader, ref, opts)
	if err != nil {
		return nil, err
	}
	used := map[netip.Addr]bool{}
	for _, a := range assigned {
		if addr, err := netip.ParseAddr(a.Spec.Address); err == nil {
			used[addr] = true
		}
	}
	addr, ok := p.next(used)
	if !ok {
		setReady(claim, "", ReasonPoolFull, fmt.Sprintf("%s %s has no free address (%d assigned): add addresses to the pool or release a claim", ref.Kind, ref.Name, len(assigned)))
		return nil, nil
	}
	address := &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Namespace: claim.Namespace, Name: claim.Name},
		Spec: ipamv1.IPAddressSpec{
			ClaimRef: ipamv1.IPAddressClaimReference{Name: claim.Name},
			PoolRef:  ref,
			Address:  addr.String(),
			Prefix:   ptr.To(int32(spec.Prefix)),
			Gateway:  spec.Gateway,
		},
	}
	if claim.Spec.ClusterName != "" {
		address.Labels = map[string]string{"cluster.x-k8s.io/cluster-name": claim.Spec.ClusterName}
	}
	if err := controllerutil.SetControllerReference(claim, address, r.Client.Scheme()); err != nil {
		return nil, err
	}
	if err := r.Client.Create(ctx, address); err != nil {
		return nil, fmt.Errorf("failed to create IPAddress %s: %w", address.Name, err)
	}
	return address, nil
}

// setReady sets the claim's addressRef and Ready condition.
func setReady(claim *ipamv1.IPAddressClaim, address, reason, message string) {
	claim.Status.AddressRef.Name = address
	status := metav1.ConditionTrue
	if address == "" {
		status = metav1.ConditionFalse
	}
	meta.SetStatusCondition(&claim.Status.Conditions, metav1.Condition{
		Type: "Ready", Status: status, Reason: reason, Message: message, ObservedGeneration: claim.Generation,
	})
}

// writeStatus patches the claim's status when the pass changed it, and records an Event when its
// Ready condition took a new reason or message: Normal for the address ip, Warning for why there
// is none.
func (r *ClaimReconciler) writeStatus(ctx context.Context, before, claim *ipamv1.IPAddressClaim, ip string) error {
	if equality.Semantic.DeepEqual(before.Status, claim.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, claim, client.MergeFrom(before)); err != nil {
		return err
	}
	was, now := meta.FindStatusCondition(before.Status.Conditions, "Ready"), meta.FindStatusCondition(claim.Status.Conditions, "Ready")
	switch {
	case now == nil || was != nil && was.Reason == now.Reason && was.Message == now.Message:
	case now.Status == metav1.ConditionTrue:
		r.Recorder.Eventf(claim, nil, corev1.EventTypeNormal, now.Reason, "Allocate", "Address %s assigned from %s %s (IPAddress %s)",
			ip, claim.Spec.PoolRef.Kind, claim.Spec.PoolRef.Name, claim.Status.AddressRef.Name)
	default:
		r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, now.Reason, "Allocate", "%s", now.Message)
	}
	return nil
}
