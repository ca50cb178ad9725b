package infrastructure

import (
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// TestPausedClusterIsLeftAlone: while its Cluster is paused (clusterctl move pauses it), a
// LocalCluster and a LocalMachine say so in their Paused condition and are not touched otherwise:
// no finalizer, and the runtime, nil here, is not reached. Unpaused, the condition says so.
func TestPausedClusterIsLeftAlone(t *testing.T) {
	ctx := t.Context()
	owner := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc", UID: "wc-uid"},
		Spec: clusterv1.ClusterSpec{Paused: ptr.To(true)}}
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc-md-0", UID: "m-uid", Labels: map[string]string{clusterv1.ClusterNameLabel: "wc"}},
		Spec:       clusterv1.MachineSpec{ClusterName: "wc"}}
	ownedBy := func(kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: name, UID: types.UID(uid)}}
	}
	lc := &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc", OwnerReferences: ownedBy("Cluster", "wc", "wc-uid")}}
	lm := &infrav1.LocalMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc-md-0", OwnerReferences: ownedBy("Machine", "wc-md-0", "m-uid"),
		Labels: map[string]string{clusterv1.ClusterNameLabel: "wc"}}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(owner, machine, lc, lm).WithStatusSubresource(lc, lm).Build()
	reconcilers := map[client.Object]func() error{
		lc: func() error {
			_, err := (&ClusterReconciler{Client: c}).Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(lc)})
			return err
		},
		lm: func() error {
			_, err := (&MachineReconciler{Client: c}).Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(lm)})
			return err
		},
	}
	paused := func(o client.Object, want metav1.ConditionStatus, reason string) {
		t.Helper()
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		cond := conditions.Get(o.(conditions.Getter), clusterv1.PausedCondition)
		if cond == nil || cond.Status != want || cond.Reason != reason {
			t.Errorf("%T Paused condition %+v, want %s (%s)", o, cond, want, reason)
		}
		if len(o.GetFinalizers()) != 0 {
			t.Errorf("%T finalizers %v after passes that ended at the Paused condition", o, o.GetFinalizers())
		}
	}

	// Twice: the first pass writes the condition, the second finds it written and stops.
	for o, reconcile := range reconcilers {
		for range 2 {
			if err := reconcile(); err != nil {
				t.Fatal(err)
			}
		}
		paused(o, metav1.ConditionTrue, clusterv1.PausedReason)
	}

	owner.Spec.Paused = ptr.To(false)
	if err := c.Update(ctx, owner); err != nil {
		t.Fatal(err)
	}
	// Once: the pass that writes the condition ends there; the next one would reach the runtime.
	for o, reconcile := range reconcilers {
		if err := reconcile(); err != nil {
			t.Fatal(err)
		}
		paused(o, metav1.ConditionFalse, clusterv1.NotPausedReason)
	}
}

// TestPauseTransitionsPassBothWays: the Cluster events the provider's objects follow are a
// Cluster created unpaused and every change of spec.paused, not other updates.
func TestPauseTransitionsPassBothWays(t *testing.T) {
	cluster := func(paused bool) *clusterv1.Cluster {
		return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc"}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(paused)}}
	}
	p := pauseTransitions(scheme.New(), logr.Discard())
	for _, c := range []struct {
		what string
		got  bool
		want bool
	}{
		{"created unpaused", p.Create(event.CreateEvent{Object: cluster(false)}), true},
		{"created paused", p.Create(event.CreateEvent{Object: cluster(true)}), false},
		{"paused", p.Update(event.UpdateEvent{ObjectOld: cluster(false), ObjectNew: cluster(true)}), true},
		{"unpaused", p.Update(event.UpdateEvent{ObjectOld: cluster(true), ObjectNew: cluster(false)}), true},
		{"updated, still unpaused", p.Update(event.UpdateEvent{ObjectOld: cluster(false), ObjectNew: cluster(false)}), false},
		{"deleted", p.Delete(event.DeleteEvent{Object: cluster(false)}), false},
	} {
		if c.got != c.want {
			t.Errorf("a Cluster %s: passed %v, want %v", c.what, c.got, c.want)
		}
	}
}
