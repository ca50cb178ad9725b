package managementcluster_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/internal/cli/managementcluster"
	"github.com/slipway-dev/slipway/internal/statedir"
	"github.com/slipway-dev/slipway/internal/test/clitest"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) { env = e }))
}

// TestCEIPParticipation records the current management cluster's CEIP participation and shows
// it with TKG's columns.
func TestCEIPParticipation(t *testing.T) {
	home := t.TempDir()
	t.Setenv(statedir.Env, home)
	// A management cluster "mgmt" made from this home, its admin context on the API server.
	if err := os.MkdirAll(filepath.Join(home, "management"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "management", "mgmt.kubeconfig"), []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := env.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts["mgmt-admin@mgmt"] = cfg.Contexts[cfg.CurrentContext]
	cfg.CurrentContext = "mgmt-admin@mgmt"
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	r := clitest.Runner{New: managementcluster.NewCommand, Kubeconfig: kubeconfig}

	for _, step := range []struct{ set, want string }{{"", "Opt-out"}, {"true", "Opt-in"}, {"false", "Opt-out"}} {
		if step.set != "" {
			r.MustRun(t, "ceip-participation", "set", step.set)
		}
		out := r.MustRun(t, "ceip-participation", "get")
		if !clitest.LineHas(out, "MANAGEMENT-CLUSTER-NAME", "CEIP-STATUS") || !clitest.LineHas(out, "mgmt", step.want) {
			t.Errorf("after set %q:\n%s", step.set, out)
		}
	}
	if out, err := r.Run(t, "ceip-participation", "set", "maybe"); err == nil || !strings.Contains(err.Error(), `invalid participation "maybe": use true or false`) {
		t.Errorf("set maybe: %v\n%s", err, out)
	}
}
