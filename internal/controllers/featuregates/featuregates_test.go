package featuregates_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1alpha2 "github.com/slipway-dev/slipway/api/core/v1alpha2"
	"github.com/slipway-dev/slipway/internal/controllers/featuregates"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		e.StartManager(func(mgr ctrl.Manager) error {
			if err := (&featuregates.FeatureReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
				return err
			}
			return (&featuregates.FeatureGateReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
		})
	}))
}

func feature(name string, stability corev1alpha2.StabilityLevel) *corev1alpha2.Feature {
	return &corev1alpha2.Feature{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1alpha2.FeatureSpec{Description: "the " + name + " feature", Stability: stability},
	}
}

func activated(t *testing.T, name string, want bool) {
	t.Helper()
	envtest.Eventually(t, 20*time.Second, name+" activation", func() error {
		f := &corev1alpha2.Feature{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, f); err != nil {
			return err
		}
		if f.Status.Activated != want {
			return fmt.Errorf("activated %t, want %t", f.Status.Activated, want)
		}
		return nil
	})
}

// results waits for a gate's featureReferenceResults to be as listed, "name=Status".
func results(t *testing.T, gate string, want ...string) []corev1alpha2.FeatureReferenceResult {
	t.Helper()
	var got []corev1alpha2.FeatureReferenceResult
	envtest.Eventually(t, 20*time.Second, gate+" results", func() error {
		g := &corev1alpha2.FeatureGate{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: gate}, g); err != nil {
			return err
		}
		got = g.Status.FeatureReferenceResults
		var have []string
		for _, r := range got {
			have = append(have, r.Name+"="+string(r.Status))
		}
		if strings.Join(have, ",") != strings.Join(want, ",") {
			return fmt.Errorf("results %v, want %v", have, want)
		}
		return nil
	})
	return got
}

// expectEvent waits for an Event of a reason about the object named regarding, with the note.
func expectEvent(t *testing.T, reason, regarding, note string) {
	t.Helper()
	envtest.ExpectEvent(t, env.Client, "", regarding, "", reason, func(n string) bool { return n == note })
}

// TestActivationFollowsPoliciesAndGates toggles Features of each stability through a gate.
func TestActivationFollowsPoliciesAndGates(t *testing.T) {
	ctx := t.Context()
	for _, f := range []*corev1alpha2.Feature{
		feature("stable", corev1alpha2.Stable),
		feature("preview", corev1alpha2.TechnicalPreview),
		feature("experiment", corev1alpha2.Experimental),
		feature("old", corev1alpha2.Deprecated),
	} {
		if err := env.Client.Create(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	// Defaults, with no gate.
	activated(t, "stable", true)
	activated(t, "preview", false)
	activated(t, "experiment", false)
	activated(t, "old", true)

	gate := &corev1alpha2.FeatureGate{
		ObjectMeta: metav1.ObjectMeta{Name: "tkg-system"},
		Spec: corev1alpha2.FeatureGateSpec{Features: []corev1alpha2.FeatureReference{
			{Name: "preview", Activate: true},
			{Name: "old", Activate: false},
			{Name: "stable", Activate: false},
			{Name: "experiment", Activate: true},
			{Name: "missing", Activate: true},
		}},
	}
	if err := env.Client.Create(ctx, gate); err != nil {
		t.Fatal(err)
	}
	got := results(t, "tkg-system", "preview=Applied", "old=Applied", "stable=Invalid", "experiment=Invalid", "missing=Invalid")
	for _, want := range []string{"stable could not be toggled because it is immutable", "setting permanentlyVoidAllSupportGuarantees to true", "does not exist"} {
		found := false
		for _, r := range got {
			found = found || strings.Contains(r.Message, want)
		}
		if !found {
			t.Errorf("no result says %q: %+v", want, got)
		}
	}
	activated(t, "preview", true)
	activated(t, "old", false)
	activated(t, "stable", true)
	// What changed, and what was refused, are Events.
	expectEvent(t, featuregates.ReasonActivated, "preview", "Feature preview activated by FeatureGate tkg-system")
	expectEvent(t, featuregates.ReasonDeactivated, "old", "Feature old deactivated by FeatureGate tkg-system")
	expectEvent(t, featuregates.ReasonInvalidReference, "tkg-system", "stable: "+got[2].Message+"; experiment: "+got[3].Message+"; missing: Feature does not exist in cluster")
	activated(t, "experiment", false)

	// Voiding the warranty lets the experiment be activated; a Feature that appears is taken in.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(gate), gate); err != nil {
		t.Fatal(err)
	}
	gate.Spec.Features[3].PermanentlyVoidAllSupportGuarantees = true
	if err := env.Client.Update(ctx, gate); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, feature("missing", corev1alpha2.TechnicalPreview)); err != nil {
		t.Fatal(err)
	}
	results(t, "tkg-system", "preview=Applied", "old=Applied", "stable=Invalid", "experiment=Applied", "missing=Applied")
	activated(t, "experiment", true)
	activated(t, "missing", true)
	// Converged, the gate and its Features are written no more.
	envtest.ExpectStill(t, 3*time.Second, envtest.On(env.Client, &corev1alpha2.FeatureGate{ObjectMeta: metav1.ObjectMeta{Name: "tkg-system"}},
		&corev1alpha2.Feature{ObjectMeta: metav1.ObjectMeta{Name: "experiment"}}, &corev1alpha2.Feature{ObjectMeta: metav1.ObjectMeta{Name: "missing"}},
		&corev1alpha2.Feature{ObjectMeta: metav1.ObjectMeta{Name: "old"}}))

	// Deleting the gate returns every Feature to its default.
	if err := env.Client.Delete(ctx, gate); err != nil {
		t.Fatal(err)
	}
	activated(t, "preview", false)
	activated(t, "old", true)
	activated(t, "experiment", false)
	activated(t, "missing", false)
}

// TestWebhookRefusesWhatPoliciesForbid validates gates against the cluster's Features and gates.
func TestWebhookRefusesWhatPoliciesForbid(t *testing.T) {
	ctx := t.Context()
	for _, f := range []*corev1alpha2.Feature{
		feature("w-stable", corev1alpha2.Stable),
		feature("w-experiment", corev1alpha2.Experimental),
		feature("w-preview", corev1alpha2.TechnicalPreview),
	} {
		if err := env.Client.Create(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	other := &corev1alpha2.FeatureGate{
		ObjectMeta: metav1.ObjectMeta{Name: "w-other"},
		Spec:       corev1alpha2.FeatureGateSpec{Features: []corev1alpha2.FeatureReference{{Name: "w-preview", Activate: true}}},
	}
	if err := env.Client.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	v := &featuregates.FeatureGateValidator{Client: env.Client}
	gate := func(refs ...corev1alpha2.FeatureReference) *corev1alpha2.FeatureGate {
		return &corev1alpha2.FeatureGate{ObjectMeta: metav1.ObjectMeta{Name: "w-gate"}, Spec: corev1alpha2.FeatureGateSpec{Features: refs}}
	}
	for _, tc := range []struct {
		name string
		gate *corev1alpha2.FeatureGate
		want string
	}{
		{"allowed", gate(corev1alpha2.FeatureReference{Name: "w-stable", Activate: true}), ""},
		{"missing", gate(corev1alpha2.FeatureReference{Name: "nope"}), `spec.features[0].name: Invalid value: "nope": no Feature of this name exists`},
		{"gated elsewhere", gate(corev1alpha2.FeatureReference{Name: "w-preview"}), "already gated by FeatureGate w-other"},
		{"immutable", gate(corev1alpha2.FeatureReference{Name: "w-stable"}), "spec.features[0].activate: Forbidden: Feature w-stable could not be toggled because it is immutable"},
		{"warranty", gate(corev1alpha2.FeatureReference{Name: "w-experiment", Activate: true}), "permanentlyVoidAllSupportGuarantees to true"},
		{"warranty voided", gate(corev1alpha2.FeatureReference{Name: "w-experiment", Activate: true, PermanentlyVoidAllSupportGuarantees: true}), ""},
	} {
		_, err := v.ValidateCreate(ctx, tc.gate)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: want an error saying %q, got %v", tc.name, tc.want, err)
		}
	}
	old := gate(corev1alpha2.FeatureReference{Name: "w-experiment", Activate: true, PermanentlyVoidAllSupportGuarantees: true})
	_, err := v.ValidateUpdate(ctx, old, gate(corev1alpha2.FeatureReference{Name: "w-experiment"}))
	if err == nil || !strings.Contains(err.Error(), "spec.features[0].permanentlyVoidAllSupportGuarantees: Forbidden") {
		t.Errorf("taking back permanentlyVoidAllSupportGuarantees: %v", err)
	}
}
