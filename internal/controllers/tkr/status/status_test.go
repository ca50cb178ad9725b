package status_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/status"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/test/tkrtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		e.StartManager(func(mgr ctrl.Manager) error {
			return (&status.ClusterReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
		})
	}))
}

func release(t *testing.T, version string) *runv1alpha3.TanzuKubernetesRelease {
	t.Helper()
	name := strings.ReplaceAll(version, "+", "---")
	image := tkrtest.OSImage("ubuntu-"+name, tkrtest.KubernetesVersion(version), "ubuntu", "2004", "ova")
	tkr := tkrtest.Release(version, image.Name)
	for _, o := range []client.Object{image, tkr} {
		if err := env.Client.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	return tkr
}

func updatesAvailable(ctx context.Context, c *clusterv1.Cluster) (string, error) {
	got := &clusterv1.Cluster{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(c), got); err != nil {
		return "", err
	}
	cond := conditions.Get(got, runv1alpha3.ConditionUpdatesAvailable)
	if cond == nil {
		return "", fmt.Errorf("no UpdatesAvailable condition")
	}
	return fmt.Sprintf("%s %s %s", cond.Status, cond.Reason, cond.Message), nil
}

func expect(t *testing.T, c *clusterv1.Cluster, want string) {
	t.Helper()
	envtest.Eventually(t, 20*time.Second, "UpdatesAvailable", func() error {
		got, err := updatesAvailable(t.Context(), c)
		if err != nil {
			return err
		}
		if strings.TrimSpace(got) != want {
			return fmt.Errorf("got %q, want %q", got, want)
		}
		return nil
	})
}

func TestUpdatesAvailable(t *testing.T) {
	ctx := t.Context()
	release(t, "v1.34.3+vmware.1-tkg.1")
	newer := release(t, "v1.34.3+vmware.1-tkg.2")
	next := release(t, "v1.35.4+vmware.1-tkg.1")
	ahead := release(t, "v1.36.0+vmware.1-tkg.1") // two minors ahead: not an update

	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wl",
		Labels:      map[string]string{runv1alpha3.LabelTKR: "v1.34.3---vmware.1-tkg.1"},
		Annotations: map[string]string{runv1alpha3.AnnotationResolveTKR: ""}}}
	cluster.Spec.Topology.ClassRef.Name = "tkg-local-default"
	cluster.Spec.Topology.Version = "v1.34.3+vmware.1"
	if err := env.Client.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	expect(t, cluster, "True UpdatesAvailable [v1.34.3+vmware.1-tkg.2 v1.35.4+vmware.1-tkg.1]")
	envtest.Eventually(t, 10*time.Second, "the UpdatesAvailable Event", func() error {
		list := &eventsv1.EventList{}
		if err := env.Client.List(ctx, list, client.InNamespace("default")); err != nil {
			return err
		}
		var notes []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "Cluster" && e.Regarding.Name == "wl" && e.Reason == status.ReasonUpdatesAvailable {
				notes = append(notes, e.Note)
			}
		}
		if want := "Kubernetes releases to upgrade to: [v1.34.3+vmware.1-tkg.2 v1.35.4+vmware.1-tkg.1]"; !slices.Contains(notes, want) {
			return fmt.Errorf("Events %q, want %q", notes, want)
		}
		return nil
	})
	// Converged, the Cluster's condition is written no more while the controller looks again:
	// a change to a release that is no update brings every Cluster back to it.
	patch := client.MergeFrom(ahead.DeepCopy())
	ahead.Annotations = map[string]string{"example.com/touched": "yes"}
	if err := env.Client.Patch(ctx, ahead, patch); err != nil {
		t.Fatal(err)
	}
	envtest.ExpectStill(t, 3*time.Second, envtest.On(env.Client, cluster.DeepCopy()))

	t.Run("deactivated releases are not updates", func(t *testing.T) {
		for _, tkr := range []*runv1alpha3.TanzuKubernetesRelease{newer, next} {
			patch := client.MergeFrom(tkr.DeepCopy())
			tkr.Labels = map[string]string{runv1alpha3.LabelDeactivated: ""}
			if err := env.Client.Patch(ctx, tkr, patch); err != nil {
				t.Fatal(err)
			}
		}
		expect(t, cluster, "False AlreadyUpToDate")
	})

	t.Run("an incompatible release is not an update", func(t *testing.T) {
		patch := client.MergeFrom(next.DeepCopy())
		delete(next.Labels, runv1alpha3.LabelDeactivated)
		if err := env.Client.Patch(ctx, next, patch); err != nil {
			t.Fatal(err)
		}
		expect(t, cluster, "True UpdatesAvailable [v1.35.4+vmware.1-tkg.1]")
		next.Status.Conditions.MarkFalse(runv1alpha3.ConditionCompatible, "NotInCompatibilityMetadata", runv1alpha3.ConditionSeverityWarning, "")
		if err := env.Client.Status().Update(ctx, next); err != nil {
			t.Fatal(err)
		}
		expect(t, cluster, "False AlreadyUpToDate")
	})
}
