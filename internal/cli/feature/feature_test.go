package feature_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1alpha2 "github.com/slipway-dev/slipway/api/core/v1alpha2"
	"github.com/slipway-dev/slipway/internal/cli/feature"
	"github.com/slipway-dev/slipway/internal/test/clitest"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

var (
	env        *envtest.Environment
	kubeconfig string
)

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		var err error
		if kubeconfig, err = e.WriteKubeconfig(); err != nil {
			panic(err)
		}
	}))
}

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return clitest.Runner{New: feature.NewCommand, Kubeconfig: kubeconfig}.Run(t, args...)
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	return clitest.Runner{New: feature.NewCommand, Kubeconfig: kubeconfig}.MustRun(t, args...)
}

// TestFeature lists, activates and deactivates Features as the tanzu feature plugin does, under
// the stability policies.
func TestFeature(t *testing.T) {
	ctx := t.Context()
	for name, level := range map[string]corev1alpha2.StabilityLevel{
		"stable-one": corev1alpha2.Stable, "preview-one": corev1alpha2.TechnicalPreview,
		"experiment": corev1alpha2.Experimental, "wip": corev1alpha2.WorkInProgress,
	} {
		f := &corev1alpha2.Feature{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1alpha2.FeatureSpec{Description: "the " + name, Stability: level}}
		if err := env.Client.Create(ctx, f); err != nil {
			t.Fatal(err)
		}
		f.Status.Activated = level == corev1alpha2.Stable
		if err := env.Client.Status().Update(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	gate := &corev1alpha2.FeatureGate{ObjectMeta: metav1.ObjectMeta{Name: "tkg-system"},
		Spec: corev1alpha2.FeatureGateSpec{Features: []corev1alpha2.FeatureReference{{Name: "stable-one", Activate: true}}}}
	if err := env.Client.Create(ctx, gate); err != nil {
		t.Fatal(err)
	}

	out := mustRun(t, "list")
	if !clitest.LineHas(out, "NAME", "ACTIVATION STATE", "FEATUREGATE") || !clitest.LineHas(out, "stable-one", "true", "tkg-system") ||
		!clitest.LineHas(out, "preview-one", "false", "--") || strings.Contains(out, "experiment") || strings.Contains(out, "wip") {
		t.Errorf("list (no Experimental, no Work In Progress):\n%s", out)
	}
	if out := mustRun(t, "list", "-x", "-e"); !clitest.LineHas(out, "experiment", "false", "Experimental", "the experiment", "false", "--") || strings.Contains(out, "wip") {
		t.Errorf("list -x -e:\n%s", out)
	}
	if out := mustRun(t, "list", "--activated"); !strings.Contains(out, "stable-one") || strings.Contains(out, "preview-one") {
		t.Errorf("list --activated:\n%s", out)
	}
	var rows []map[string]string
	if err := json.Unmarshal([]byte(mustRun(t, "list", "-f", "tkg-system", "-o", "json")), &rows); err != nil || len(rows) != 1 || rows[0]["name"] != "stable-one" {
		t.Errorf("list -f tkg-system -o json: %v, %v", rows, err)
	}

	if out := mustRun(t, "activate", "preview-one"); !strings.Contains(out, "Feature preview-one Activated") {
		t.Errorf("activate:\n%s", out)
	}
	got := &corev1alpha2.FeatureGate{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "tkg-system"}, got); err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Features) != 2 || got.Spec.Features[1] != (corev1alpha2.FeatureReference{Name: "preview-one", Activate: true}) {
		t.Errorf("the gate after activate: %+v", got.Spec.Features)
	}
	if out := mustRun(t, "deactivate", "preview-one"); !strings.Contains(out, "Feature preview-one Deactivated") {
		t.Errorf("deactivate:\n%s", out)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "tkg-system"}, got); err != nil || got.Spec.Features[1].Activate {
		t.Errorf("the gate after deactivate: %+v, %v", got.Spec.Features, err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"deactivate", "stable-one"}, "feature stable-one is Stable, which cannot be toggled"},
		{[]string{"activate", "experiment"}, "add --permanentlyVoidAllSupportGuarantees to accept that"},
		{[]string{"activate", "nothing"}, "there is no Feature nothing on the cluster"},
		{[]string{"activate", "preview-one", "-f", "other"}, "there is no FeatureGate other on the cluster: name the one that gates preview-one with --featuregate"},
	} {
		if out, err := run(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q\n%s", tc.args, err, tc.want, out)
		}
	}
	if out := mustRun(t, "activate", "experiment", "--permanentlyVoidAllSupportGuarantees"); !strings.Contains(out, "Feature experiment Activated") {
		t.Errorf("activate with the warranty voided:\n%s", out)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "tkg-system"}, got); err != nil ||
		got.Spec.Features[2] != (corev1alpha2.FeatureReference{Name: "experiment", Activate: true, PermanentlyVoidAllSupportGuarantees: true}) {
		t.Errorf("the gate: %+v, %v", got.Spec.Features, err)
	}
}
