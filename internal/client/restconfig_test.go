package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRESTConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: {server: "https://127.0.0.1:6443"}
- name: two
  cluster: {server: "https://127.0.0.2:6443"}
users:
- name: admin
  user: {token: secret}
contexts:
- name: one
  context: {cluster: one, user: admin}
- name: two
  context: {cluster: two, user: admin}
current-context: one
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	for context, host := range map[string]string{"": "https://127.0.0.1:6443", "two": "https://127.0.0.2:6443"} {
		cfg, err := RESTConfig(path, context)
		if err != nil {
			t.Fatal(err)
		}
		// client-go's default of 5 requests a second throttles the flows' checks.
		if cfg.Host != host || cfg.QPS != QPS || cfg.Burst != Burst {
			t.Errorf("context %q: host %s, QPS %v, burst %d", context, cfg.Host, cfg.QPS, cfg.Burst)
		}
	}
	if _, err := RESTConfig(path, "three"); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "three") {
		t.Errorf("an unknown context: %v", err)
	}
}
