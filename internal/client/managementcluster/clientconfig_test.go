package managementcluster_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/client/managementcluster"
)

// TestGetListsTheManagementClusters makes the configuration of a home with two management
// clusters: both are servers with their admin context, the one made last is current when the
// kubeconfig's context is neither, and the context-aware feature is on.
func TestGetListsTheManagementClusters(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "management"), 0o700); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"mc-old", "mc-new"} {
		path := filepath.Join(home, "management", name+".kubeconfig")
		if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(time.Duration(i-2) * time.Hour)
		if err := os.Chtimes(path, when, when); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\ncurrent-context: other\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := managementcluster.ClientConfig(home, kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientOptions.Features["global"][managementcluster.ContextAwarePlugins] != "true" {
		t.Errorf("features: %v", cfg.ClientOptions.Features)
	}
	if cfg.Current != "mc-new" || len(cfg.Servers) != 2 {
		t.Fatalf("current %q, servers %+v", cfg.Current, cfg.Servers)
	}
	s := cfg.Servers[0]
	if s.Name != "mc-new" || s.Type != "managementcluster" || s.ManagementClusterOpts.Context != "mc-new-admin@mc-new" ||
		s.ManagementClusterOpts.Path != filepath.Join(home, "management", "mc-new.kubeconfig") {
		t.Errorf("server: %+v", s)
	}
	empty, err := managementcluster.ClientConfig(t.TempDir(), kubeconfig)
	if err != nil || empty.Current != "" || len(empty.Servers) != 0 {
		t.Errorf("a home with no management cluster: %+v, %v", empty, err)
	}
}
