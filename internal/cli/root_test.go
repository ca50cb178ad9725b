package cli_test

import (
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli"
	slipwayversion "github.com/slipway-dev/slipway/internal/version"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	cmd := cli.NewCommand(streams)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// TestTanzuCommandLinesOfSeeds001 runs the command lines of seeds/001 that need no cluster, with
// tanzu replaced by slipway: each exits 0 and prints what TKG's scripts read from it.
func TestTanzuCommandLinesOfSeeds001(t *testing.T) {
	t.Setenv("SLIPWAY_HOME", t.TempDir())
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"config", "get"}, []string{"context-aware-cli-for-plugins: \"true\"", "kind: ClientConfig"}},
		{[]string{"plugin", "clean"}, []string{"no installed plugins"}},
		{[]string{"plugin", "repo", "update", "-b", "tanzu-cli-framework", "core"}, []string{"core"}},
		{[]string{"plugin", "list"}, []string{"Standalone Plugins", "management-cluster", "cluster", "package", "feature", "kubernetes-release"}},
		{[]string{"version"}, []string{"version: ", "buildDate: ", "sha: "}},
		{[]string{"cluster", "version"}, []string{slipwayversion.Get() + "\n"}},
	} {
		out, err := run(t, tc.args...)
		if err != nil {
			t.Errorf("slipway %s: %v\n%s", strings.Join(tc.args, " "), err, out)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("slipway %s prints no %q:\n%s", strings.Join(tc.args, " "), w, out)
			}
		}
	}
}

// TestKubernetesTargetHoldsThePlugins finds every plugin, with its version, under tanzu's target
// command `kubernetes` (alias k8s) as at the top: `tanzu kubernetes cluster create` is seeds/001's.
func TestKubernetesTargetHoldsThePlugins(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	root := cli.NewCommand(streams)
	for _, plugin := range []string{"management-cluster", "cluster", "package", "kubernetes-release", "feature"} {
		for _, path := range [][]string{{plugin, "version"}, {"kubernetes", plugin, "version"}, {"k8s", plugin, "version"}} {
			if c, _, err := root.Find(path); err != nil || c.Name() != "version" {
				t.Errorf("slipway %s: %v", strings.Join(path, " "), err)
			}
		}
	}
	if c, _, err := root.Find([]string{"kubernetes", "cluster", "create"}); err != nil || c.Flags().Lookup("tkr") == nil || c.Flags().ShorthandLookup("v") == nil {
		t.Errorf("slipway kubernetes cluster create lacks --tkr or -v: %v", err)
	}
}
