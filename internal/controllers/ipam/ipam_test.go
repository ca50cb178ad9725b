package ipam_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha2 "github.com/slipway-dev/slipway/api/ipam/v1alpha2"
	"github.com/slipway-dev/slipway/internal/controllers/ipam"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		e.StartManager(func(mgr ctrl.Manager) error {
			if err := (&ipam.ClaimReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}).SetupWithManager(mgr); err != nil {
				return err
			}
			for _, kind := range []string{ipam.KindPool, ipam.KindGlobalPool} {
				if err := (&ipam.PoolReconciler{Client: mgr.GetClient(), Kind: kind}).SetupWithManager(mgr); err != nil {
					return err
				}
			}
			return nil
		})
	}))
}

func claim(ns, name, kind, pool string) *ipamv1.IPAddressClaim {
	return &ipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: ipamv1.IPAddressClaimSpec{ClusterName: "wc", PoolRef: ipamv1.IPPoolReference{
			APIGroup: ipamv1alpha2.GroupVersion.Group, Kind: kind, Name: pool}},
	}
}

// expectEvent waits for the one events.k8s.io Event of a reason about a claim, with the note.
func expectEvent(t *testing.T, c *ipamv1.IPAddressClaim, typ, reason, note string) {
	t.Helper()
	envtest.Eventually(t, 10*time.Second, c.Name+" Event "+reason, func() error {
		list := &eventsv1.EventList{}
		if err := env.Client.List(t.Context(), list, client.InNamespace(c.Namespace)); err != nil {
			return err
		}
		var found []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "IPAddressClaim" && e.Regarding.Name == c.Name && e.Reason == reason {
				found = append(found, e.Type+": "+e.Note)
			}
		}
		if len(found) != 1 || !strings.HasPrefix(found[0], typ+": "+note) {
			return fmt.Errorf("Events %q, want one %s: %s…", found, typ, note)
		}
		return nil
	})
}

// readyCondition waits for a claim's Ready condition to have the reason and returns it.
func readyCondition(t *testing.T, c *ipamv1.IPAddressClaim, reason string) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	envtest.Eventually(t, 20*time.Second, c.Name+" "+reason, func() error {
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(c.Status.Conditions, "Ready")
		if cond == nil || cond.Reason != reason {
			return fmt.Errorf("conditions %+v", c.Status.Conditions)
		}
		got = *cond
		return nil
	})
	return got
}

func addressOf(t *testing.T, c *ipamv1.IPAddressClaim) ipamv1.IPAddress {
	t.Helper()
	readyCondition(t, c, ipam.ReasonAllocated)
	a := ipamv1.IPAddress{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: c.Namespace, Name: c.Status.AddressRef.Name}, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestClaimsGetAddressesFromPools(t *testing.T) {
	ctx := t.Context()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ipam"}}); err != nil {
		t.Fatal(err)
	}
	// 10.0.0.0 is the network address and 10.0.0.1 the gateway; .3 is excluded.
	pool := &ipamv1alpha2.InClusterIPPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ipam", Name: "nodes"},
		Spec: ipamv1alpha2.InClusterIPPoolSpec{
			Addresses: []string{"10.0.0.0-10.0.0.4"}, Prefix: 24, Gateway: "10.0.0.1", ExcludedAddresses: []string{"10.0.0.3"},
		},
	}
	if err := env.Client.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	first, second, third := claim("ipam", "cp-0", ipam.KindPool, "nodes"), claim("ipam", "md-0", ipam.KindPool, "nodes"), claim("ipam", "md-1", ipam.KindPool, "nodes")
	for _, c := range []*ipamv1.IPAddressClaim{first, second} {
		if err := env.Client.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// The two claims are reconciled in either order: each gets one of the two free addresses.
	a, b := addressOf(t, first), addressOf(t, second)
	got := map[string]bool{a.Spec.Address: true, b.Spec.Address: true}
	if !got["10.0.0.2"] || !got["10.0.0.4"] || *a.Spec.Prefix != 24 || a.Spec.Gateway != "10.0.0.1" ||
		a.Spec.ClaimRef.Name != "cp-0" || a.Labels["cluster.x-k8s.io/cluster-name"] != "wc" {
		t.Fatalf("addresses %+v and %+v", a.Spec, b.Spec)
	}
	envtest.Eventually(t, 20*time.Second, "pool counts", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
			return err
		}
		if c := pool.Status.Addresses; c == nil || c.Total != 2 || c.Used != 2 || c.Free != 0 {
			return fmt.Errorf("counts %+v", c)
		}
		return nil
	})
	// Converged, the pool, the claims and their addresses are written no more when the pool's
	// controller looks again (an annotation brings it back).
	touched := pool.DeepCopy()
	touched.Annotations = map[string]string{"example.com/touched": "yes"}
	if err := env.Client.Patch(ctx, touched, client.MergeFrom(pool)); err != nil {
		t.Fatal(err)
	}
	envtest.ExpectStill(t, 3*time.Second, envtest.On(env.Client, touched, first.DeepCopy(), second.DeepCopy(), a.DeepCopy(), b.DeepCopy()))

	// The pool is full: the third claim says so, and gets an address when one is released.
	if err := env.Client.Create(ctx, third); err != nil {
		t.Fatal(err)
	}
	if cond := readyCondition(t, third, ipam.ReasonPoolFull); !strings.Contains(cond.Message, "InClusterIPPool nodes has no free address (2 assigned)") {
		t.Errorf("full pool message: %q", cond.Message)
	}
	// Each claim's Ready reason is an Event, once: the address given, or why there is none.
	expectEvent(t, first, corev1.EventTypeNormal, ipam.ReasonAllocated, "Address "+a.Spec.Address+" assigned from InClusterIPPool nodes")
	expectEvent(t, third, corev1.EventTypeWarning, ipam.ReasonPoolFull, "InClusterIPPool nodes has no free address")
	// envtest runs no garbage collector: delete the claim's address after it, as it would.
	if err := env.Client.Delete(ctx, second); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, &b); err != nil {
		t.Fatal(err)
	}
	// A released address is assigned before one the pool gains.
	envtest.Eventually(t, 10*time.Second, "pool updated", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
			return err
		}
		pool.Spec.Addresses = append(pool.Spec.Addresses, "10.0.0.10/32")
		return env.Client.Update(ctx, pool)
	})
	if got := addressOf(t, third).Spec.Address; got != b.Spec.Address {
		t.Errorf("the third claim got %s, want the released %s", got, b.Spec.Address)
	}

	// A global pool serves claims of any namespace; a missing or invalid pool is named.
	global := &ipamv1alpha2.GlobalInClusterIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: "shared"},
		Spec:       ipamv1alpha2.InClusterIPPoolSpec{Addresses: []string{"fd00::10/126"}, Prefix: 64},
	}
	if err := env.Client.Create(ctx, global); err != nil {
		t.Fatal(err)
	}
	g := claim("default", "vip", ipam.KindGlobalPool, "shared")
	if err := env.Client.Create(ctx, g); err != nil {
		t.Fatal(err)
	}
	if got := addressOf(t, g).Spec.Address; got != "fd00::10" {
		t.Errorf("global pool gave %s", got)
	}
	missing := claim("ipam", "lost", ipam.KindPool, "nowhere")
	if err := env.Client.Create(ctx, missing); err != nil {
		t.Fatal(err)
	}
	if cond := readyCondition(t, missing, ipam.ReasonPoolNotFound); !strings.Contains(cond.Message, "InClusterIPPool nowhere does not exist") {
		t.Errorf("missing pool message: %q", cond.Message)
	}
	bad := &ipamv1alpha2.InClusterIPPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ipam", Name: "bad"},
		Spec:       ipamv1alpha2.InClusterIPPoolSpec{Addresses: []string{"10.0.1.9-10.0.1.2"}, Prefix: 24},
	}
	if err := env.Client.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	badClaim := claim("ipam", "on-bad", ipam.KindPool, "bad")
	if err := env.Client.Create(ctx, badClaim); err != nil {
		t.Fatal(err)
	}
	if cond := readyCondition(t, badClaim, ipam.ReasonPoolInvalid); !strings.Contains(cond.Message, `spec.addresses[0] "10.0.1.9-10.0.1.2"`) {
		t.Errorf("invalid pool message: %q", cond.Message)
	}
}

// TestClaimsOfAPausedClusterWait checks that a claim is left alone while its Cluster is paused
// (as clusterctl move pauses it) or while it carries the paused annotation, and is served when
// the pause ends.
func TestClaimsOfAPausedClusterWait(t *testing.T) {
	ctx := t.Context()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "paused"}}); err != nil {
		t.Fatal(err)
	}
	pool := &ipamv1alpha2.InClusterIPPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "paused", Name: "nodes"},
		Spec:       ipamv1alpha2.InClusterIPPoolSpec{Addresses: []string{"10.1.0.10-10.1.0.20"}, Prefix: 24, Gateway: "10.1.0.1"},
	}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "paused", Name: "pc"}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(true)}}
	held := claim("paused", "held", ipam.KindPool, "nodes")
	held.Spec.ClusterName = "pc"
	annotated := claim("paused", "annotated", ipam.KindPool, "nodes")
	annotated.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	// A claim on the same pool whose cluster is not paused, created last: once it is served, the
	// controller has seen the two paused claims too.
	served := claim("paused", "served", ipam.KindPool, "nodes")
	for _, o := range []client.Object{pool, cluster, held, annotated, served} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if a := addressOf(t, served); a.Spec.Address != "10.1.0.10" {
		t.Errorf("the claim of the unpaused cluster got %s, want 10.1.0.10", a.Spec.Address)
	}
	envtest.Consistently(t, 2*time.Second, "the paused claims", func() error {
		for _, c := range []*ipamv1.IPAddressClaim{held, annotated} {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
				return err
			}
			if c.Status.AddressRef.Name != "" || len(c.Status.Conditions) > 0 {
				return fmt.Errorf("paused claim %s was reconciled: %+v", c.Name, c.Status)
			}
		}
		return nil
	})
	before := cluster.DeepCopy()
	cluster.Spec.Paused = ptr.To(false)
	if err := env.Client.Patch(ctx, cluster, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	if a := addressOf(t, held); a.Spec.Address != "10.1.0.11" {
		t.Errorf("the claim of the resumed cluster got %s, want 10.1.0.11", a.Spec.Address)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(annotated), annotated); err != nil {
		t.Fatal(err)
	}
	if annotated.Status.AddressRef.Name != "" {
		t.Errorf("the claim annotated paused was served")
	}
}
