package envtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Objects are objects read through one client, for ExpectStill.
type Objects struct {
	Reader  client.Reader
	Objects []client.Object
}

// On names objects to read through r.
func On(r client.Reader, objs ...client.Object) Objects { return Objects{Reader: r, Objects: objs} }

// ExpectStill fails the test when any of the objects is written within d: a converged object's
// resourceVersion stays still while its controllers look at it again and again. Each object is
// read first (it must exist); a changed one is reported with what changed.
func ExpectStill(t testing.TB, d time.Duration, sets ...Objects) {
	t.Helper()
	type read struct {
		r      client.Reader
		before client.Object
	}
	var reads []read
	for _, set := range sets {
		for _, o := range set.Objects {
			if err := set.Reader.Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
				t.Fatalf("%T %s: %v", o, client.ObjectKeyFromObject(o), err)
			}
			reads = append(reads, read{set.Reader, o.DeepCopyObject().(client.Object)})
		}
	}
	time.Sleep(d)
	var changed []string
	for _, rd := range reads {
		after := rd.before.DeepCopyObject().(client.Object)
		if err := rd.r.Get(t.Context(), client.ObjectKeyFromObject(rd.before), after); err != nil {
			t.Fatalf("%T %s: %v", after, client.ObjectKeyFromObject(after), err)
		}
		if after.GetResourceVersion() == rd.before.GetResourceVersion() {
			continue
		}
		changed = append(changed, fmt.Sprintf("%T %s (resourceVersion %s → %s):\n%s", after, client.ObjectKeyFromObject(after),
			rd.before.GetResourceVersion(), after.GetResourceVersion(), cmp.Diff(rd.before, after)))
	}
	for _, c := range changed {
		t.Errorf("written within %s although nothing changed: %s", d, c)
	}
	if len(changed) == 0 {
		t.Logf("%d objects still for %s", len(reads), d)
	}
}

// Consistently checks f every 200ms for d and fails the test at the first error: the guard of
// "this must not happen". Call it only after a positive sign that the controller has already
// looked at the objects f reads (a sibling served, a condition written), so that a window in
// which the controller never ran cannot pass for one in which it held back.
func Consistently(t testing.TB, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Reconciles is how many reconciles the named controller of this test process has finished,
// whatever their result, as its manager counts them (controller_runtime_reconcile_total).
func Reconciles(t testing.TB, controller string) int {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatalf("failed to read the controllers' metrics: %v", err)
	}
	n := 0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					n += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return n
}

// ReconciledSince waits until the named controller has finished a reconcile since Reconciles
// returned before: the positive sign that it looked at a change, for a Consistently to follow.
func ReconciledSince(t testing.TB, controller string, before int) {
	t.Helper()
	Eventually(t, 30*time.Second, "a reconcile of controller "+controller, func() error {
		if n := Reconciles(t, controller); n <= before {
			return fmt.Errorf("%d reconciles, none since %d", n, before)
		}
		return nil
	})
}
