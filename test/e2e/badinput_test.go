package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/local/proc"
)

// TestLocalClusterBadInput checks that bad input fails before anything starts, with a message
// that says what to do.
func TestLocalClusterBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"unknown version", []string{"bad-version", "--kubernetes-version", "v1.20.0"}, nil, "use one of v1.35.4, v1.34.3"},
		{"invalid name", []string{"Bad_Name"}, nil, "invalid local cluster name"},
		{"no control plane", []string{"bad-cp", "--control-plane-nodes", "0"}, nil, "at least one control-plane node"},
		{"negative wait", []string{"bad-wait", "--wait", "-5s"}, nil, "--wait -5s is negative"},
		{"assets missing", []string{"bad-assets"}, []string{assets.DirEnv + "=" + t.TempDir()}, "run `make assets`"},
		// A bootstrap cluster of real nodes installs from TKG_CUSTOM_IMAGE_REPOSITORY's copy,
		// which must be on this host; one on this host must answer where the nodes reach it.
		{"copy off this host", []string{"bad-copy", "--bootstrap"}, []string{"TKG_CUSTOM_IMAGE_REPOSITORY=registry.example.com/tkg"},
			"TKG_CUSTOM_IMAGE_REPOSITORY registry.example.com/tkg: its registry registry.example.com is not on this host's IPv4 loopback"},
		{"copy not on the bridge", []string{"bad-bridge"}, []string{"TKG_CUSTOM_IMAGE_REPOSITORY=127.0.0.1:1/tkg"},
			"TKG_CUSTOM_IMAGE_REPOSITORY: the registry 127.0.0.1:1 does not answer at 198.18.0.1:1, where real nodes reach it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, e := range tc.env {
				k, v, _ := strings.Cut(e, "=")
				t.Setenv(k, v)
			}
			out, err := runSlipway(t, append([]string{"local", "cluster", "create"}, tc.args...)...)
			if err == nil || !strings.Contains(out, tc.want) {
				t.Fatalf("want a failure saying %q, got %v:\n%s", tc.want, err, out)
			}
			assertNothingStarted(t, tc.args[0])
		})
	}

	t.Run("name taken", func(t *testing.T) {
		dir := filepath.Join(home, "local", "taken")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		out, err := runSlipway(t, "local", "cluster", "create", "taken")
		if err == nil || !strings.Contains(out, "already exists: delete it with `slipway local cluster delete taken`") {
			t.Fatalf("want a name-taken failure, got %v:\n%s", err, out)
		}
	})
}

func assertNothingStarted(t *testing.T, name string) {
	t.Helper()
	dir := filepath.Join(home, "local", name)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("state %s was created: %v", dir, err)
	}
	if pids := proc.Using(dir); len(pids) > 0 {
		t.Errorf("processes %v were started", pids)
	}
}
