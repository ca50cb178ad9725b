package plugin_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli/plugin"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	plugins := []*cobra.Command{{Use: "cluster", Short: "Workload clusters"}, {Use: "package", Short: "Packages"}}
	cmd := plugin.NewCommand(streams, plugins)
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(out)
	err := cmd.Execute()
	return out.String(), err
}

// TestListShowsTheBuiltInPlugins lists each plugin under tanzu's columns, as a table and as JSON.
func TestListShowsTheBuiltInPlugins(t *testing.T) {
	out, err := run(t, "list")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || lines[0] != "Standalone Plugins" || strings.Join(strings.Fields(lines[1]), " ") != "NAME DESCRIPTION TARGET DISCOVERY VERSION STATUS" {
		t.Fatalf("list:\n%s", out)
	}
	if f := strings.Fields(lines[2]); f[0] != "cluster" || f[len(f)-4] != "kubernetes" || f[len(f)-3] != "built-in" || f[len(f)-1] != "installed" {
		t.Errorf("cluster's row: %q", lines[2])
	}
	out, err = run(t, "list", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var listed []map[string]string
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(listed) != 2 || listed[1]["name"] != "package" || listed[1]["description"] != "Packages" || listed[1]["target"] != "kubernetes" {
		t.Errorf("json: %v", listed)
	}
}

// TestCleanAndRepoUpdateSayThereIsNothingToDo accepts seeds/001's command lines and says why
// they change nothing; repo update without a location is refused as tanzu refuses it.
func TestCleanAndRepoUpdateSayThereIsNothingToDo(t *testing.T) {
	if out, err := run(t, "clean"); err != nil || !strings.Contains(out, "no installed plugins to clean up") {
		t.Errorf("clean: %v\n%s", err, out)
	}
	if out, err := run(t, "repo", "update", "-b", "tanzu-cli-framework", "core"); err != nil || !strings.Contains(out, `core (bucket "tanzu-cli-framework"`) {
		t.Errorf("repo update: %v\n%s", err, out)
	}
	if _, err := run(t, "repo", "update", "core"); err == nil || !strings.Contains(err.Error(), "--gcp-bucket-name (-b)") {
		t.Errorf("repo update without a bucket: %v", err)
	}
}
