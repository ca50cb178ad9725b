package kubernetesrelease_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/cli/kubernetesrelease"
	"github.com/slipway-dev/slipway/internal/test/clitest"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/test/tkrtest"
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

// run runs `slipway kubernetes-release ARGS` and returns what it printed.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return clitest.Runner{New: kubernetesrelease.NewCommand, Kubeconfig: kubeconfig}.Run(t, args...)
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	return clitest.Runner{New: kubernetesrelease.NewCommand, Kubeconfig: kubeconfig}.MustRun(t, args...)
}

func release(t *testing.T, version, compatible string) {
	t.Helper()
	ctx := t.Context()
	name := strings.ReplaceAll(version, "+", "---")
	k8s := tkrtest.KubernetesVersion(version)
	images := []*runv1alpha3.OSImage{
		tkrtest.OSImage(name+"-ubuntu", k8s, "ubuntu", "2004", "ova"),
		tkrtest.OSImage(name+"-photon", k8s, "photon", "3", "ova"),
	}
	tkr := tkrtest.Release(version, images[0].Name, images[1].Name)
	for _, o := range images {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.Create(ctx, tkr); err != nil {
		t.Fatal(err)
	}
	tkr.Status.Conditions.Set(runv1alpha3.Condition{Type: runv1alpha3.ConditionCompatible, Status: corev1.ConditionStatus(compatible)})
	if err := env.Client.Status().Update(ctx, tkr); err != nil {
		t.Fatal(err)
	}
}

func TestKubernetesRelease(t *testing.T) {
	ctx := t.Context()
	release(t, "v1.34.3+vmware.1-tkg.1", "True")
	release(t, "v1.35.4+vmware.1-tkg.1", "True")
	release(t, "v1.36.0+vmware.1-tkg.1", "False")

	t.Run("get lists compatible active releases, -a all of them", func(t *testing.T) {
		out := mustRun(t, "get")
		if !clitest.HasRow(out, "NAME", "VERSION", "COMPATIBLE", "ACTIVE") || !clitest.HasRow(out, "v1.34.3---vmware.1-tkg.1", "v1.34.3+vmware.1-tkg.1", "True", "True") ||
			strings.Contains(out, "v1.36.0") {
			t.Fatalf("get:\n%s", out)
		}
		if out := mustRun(t, "get", "-a"); !clitest.HasRow(out, "v1.36.0---vmware.1-tkg.1", "v1.36.0+vmware.1-tkg.1", "False", "True") {
			t.Fatalf("get -a:\n%s", out)
		}
		var rows []map[string]string
		if err := json.Unmarshal([]byte(mustRun(t, "get", "-o", "json")), &rows); err != nil || len(rows) != 2 || rows[1]["version"] != "v1.35.4+vmware.1-tkg.1" {
			t.Fatalf("get -o json: %v %v", rows, err)
		}
	})

	t.Run("deactivate hides a release, activate brings it back", func(t *testing.T) {
		out := mustRun(t, "deactivate", "v1.35.4---vmware.1-tkg.1")
		if !strings.Contains(out, "deactivated TanzuKubernetesRelease v1.35.4---vmware.1-tkg.1") {
			t.Fatalf("deactivate: %s", out)
		}
		if out := mustRun(t, "get"); strings.Contains(out, "v1.35.4") {
			t.Fatalf("a deactivated release is listed:\n%s", out)
		}
		if out := mustRun(t, "get", "-a"); !clitest.HasRow(out, "v1.35.4---vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1", "True", "False") {
			t.Fatalf("get -a:\n%s", out)
		}
		mustRun(t, "activate", "v1.35.4---vmware.1-tkg.1")
		if out := mustRun(t, "get"); !clitest.HasRow(out, "v1.35.4---vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1", "True", "True") {
			t.Fatalf("get after activate:\n%s", out)
		}
	})

	t.Run("os get lists a release's images", func(t *testing.T) {
		out := mustRun(t, "os", "get", "v1.34.3---vmware.1-tkg.1")
		if !clitest.HasRow(out, "ubuntu", "2004", "amd64", "ova", "v1.34.3---vmware.1-tkg.1-ubuntu") || !clitest.HasRow(out, "photon", "3", "amd64", "ova", "v1.34.3---vmware.1-tkg.1-photon") {
			t.Fatalf("os get:\n%s", out)
		}
	})

	t.Run("available-upgrades get lists the cluster's usable updates", func(t *testing.T) {
		cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wl",
			Labels: map[string]string{runv1alpha3.LabelTKR: "v1.34.3---vmware.1-tkg.1"}}}
		cluster.Spec.Topology.ClassRef.Name = "tkg-local-default"
		cluster.Spec.Topology.Version = "v1.34.3+vmware.1"
		if err := env.Client.Create(ctx, cluster); err != nil {
			t.Fatal(err)
		}
		conditions.Set(cluster, metav1.Condition{Type: runv1alpha3.ConditionUpdatesAvailable, Status: metav1.ConditionTrue, Reason: "UpdatesAvailable",
			Message: "[v1.35.4+vmware.1-tkg.1 v1.36.0+vmware.1-tkg.1]"})
		if err := env.Client.Status().Update(ctx, cluster); err != nil {
			t.Fatal(err)
		}
		out := mustRun(t, "available-upgrades", "get", "wl", "--cluster")
		if !clitest.HasRow(out, "v1.35.4---vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1") || strings.Contains(out, "v1.36.0") {
			t.Fatalf("available-upgrades get --cluster (the incompatible v1.36.0 must not show):\n%s", out)
		}
		if out, err := run(t, "available-upgrades", "get", "wl", "--cluster", "-n", "elsewhere"); err == nil || !strings.Contains(err.Error(), "-n") {
			t.Fatalf("a missing cluster: %v %s", err, out)
		}
		_ = env.Client.Delete(ctx, cluster, client.PropagationPolicy(metav1.DeletePropagationBackground))
	})

	t.Run("available-upgrades get TKR_NAME lists a release's usable upgrades, as TKG", func(t *testing.T) {
		out := mustRun(t, "available-upgrades", "get", "v1.34.3---vmware.1-tkg.1")
		if !clitest.HasRow(out, "NAME", "VERSION") || !clitest.HasRow(out, "v1.35.4---vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1") ||
			strings.Contains(out, "v1.36.0") || strings.Contains(out, "v1.34.3+") {
			t.Fatalf("available-upgrades get v1.34.3---vmware.1-tkg.1 (only the compatible, newer v1.35.4):\n%s", out)
		}
		if out := mustRun(t, "available-upgrades", "get", "v1.35.4---vmware.1-tkg.1"); !strings.Contains(out, "There are no available upgrades for release v1.35.4---vmware.1-tkg.1") {
			t.Fatalf("the newest release:\n%s", out)
		}
		if out, err := run(t, "available-upgrades", "get", "v1.99.0---vmware.1-tkg.1"); err == nil || !strings.Contains(err.Error(), "kubernetes-release get -a") {
			t.Fatalf("an unknown release: %v %s", err, out)
		}
	})

	t.Run("bad input names the fix", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"get", "-o", "xml"}, "use table, json or yaml"},
			{[]string{"deactivate", "v1.35.4---vmware.1-tkg.1", "v9.9.9"}, "kubernetes-release get -a"},
			{[]string{"os", "get", "nope"}, `"nope" not found`},
		} {
			if out, err := run(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: %v %s, want an error saying %q", c.args, err, out, c.want)
			}
		}
		// The failed deactivate changed nothing, not even the release that exists.
		if out := mustRun(t, "get"); !strings.Contains(out, "v1.35.4") {
			t.Fatalf("a failed deactivate changed a release:\n%s", out)
		}
	})
}
