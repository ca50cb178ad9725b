package tkr

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/scheme"
)

func release(name, version string, ready bool) *runv1alpha3.TanzuKubernetesRelease {
	t := &runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: runv1alpha3.TanzuKubernetesReleaseSpec{Version: version}}
	if ready {
		t.Status.Conditions = []runv1alpha3.Condition{{Type: runv1alpha3.ConditionReady, Status: corev1.ConditionTrue}}
	}
	return t
}

// TestWaitReady: a Kubernetes version is answered by its release and a release's version by
// itself; each release found is told once, and Ready once; a release that becomes Ready during
// the wait ends it; a timeout names each version left and why.
func TestWaitReady(t *testing.T) {
	old := release("v1.34.3---vmware.1-tkg.1", "v1.34.3+vmware.1-tkg.1", true)
	current := release("v1.35.4---vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1", false)
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(old, current).WithStatusSubresource(old, current).Build()

	var told []string
	p := Progress{Found: func(n string) { told = append(told, "found "+n) }, Ready: func(n string) { told = append(told, "ready "+n) }}
	go func() {
		time.Sleep(1500 * time.Millisecond)
		current.Status.Conditions = []runv1alpha3.Condition{{Type: runv1alpha3.ConditionReady, Status: corev1.ConditionTrue}}
		if err := c.Status().Update(t.Context(), current); err != nil {
			t.Error(err)
		}
	}()
	// Two ways of asking for v1.34.3's release: it is told Ready once.
	if err := WaitReady(t.Context(), c, []string{"v1.34.3+vmware.1-tkg.1", "v1.34.3", "v1.35.4"}, 20*time.Second, p); err != nil {
		t.Fatal(err)
	}
	want := "found v1.34.3---vmware.1-tkg.1, ready v1.34.3---vmware.1-tkg.1, found v1.35.4---vmware.1-tkg.1, ready v1.35.4---vmware.1-tkg.1"
	if got := strings.Join(told, ", "); got != want {
		t.Errorf("told %q, want %q", got, want)
	}

	current.Status.Conditions = nil
	if err := c.Status().Update(t.Context(), current); err != nil {
		t.Fatal(err)
	}
	err := WaitReady(t.Context(), c, []string{"v1.35.4", "v1.36.0", "v1.34.3"}, 1500*time.Millisecond, Progress{})
	for _, part := range []string{"not ready after 1.5s (v1.35.4: TanzuKubernetesRelease v1.35.4---vmware.1-tkg.1 is not Ready; v1.36.0: no TanzuKubernetesRelease has this version;", "kubernetes-release get"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("error %v, want it to say %q", err, part)
		}
	}
	if err != nil && strings.Contains(err.Error(), "v1.34.3:") {
		t.Errorf("error %v names v1.34.3, which has a Ready release", err)
	}
}

// TestWaitReadyInterrupted: an interrupt is said as one, not as a timeout.
func TestWaitReadyInterrupted(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	err := WaitReady(ctx, c, []string{"v1.35.4"}, time.Hour, Progress{})
	if err == nil || !strings.HasPrefix(err.Error(), "interrupted while waiting for Kubernetes releases (v1.35.4: no TanzuKubernetesRelease has this version)") {
		t.Errorf("error %v, want an interruption naming v1.35.4", err)
	}
}
