package managementcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCurrent checks which management cluster commands act on when none is named: the only
// one; of several, the one of the kubeconfig's current context, else the last created.
func TestCurrent(t *testing.T) {
	home := t.TempDir()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if name, _, err := Current(home, kubeconfig); err != nil || name != "" {
		t.Fatalf("no management cluster: %q, %v", name, err)
	}
	made := func(name string, at time.Time) {
		t.Helper()
		path := filepath.Join(home, "management", name+".kubeconfig")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	made("older", now.Add(-time.Hour))
	if name, guessed, err := Current(home, kubeconfig); err != nil || name != "older" || guessed {
		t.Fatalf("one management cluster: %q, %v, %v", name, guessed, err)
	}
	made("newer", now)
	if name, guessed, err := Current(home, kubeconfig); err != nil || name != "newer" || !guessed {
		t.Fatalf("two, no kubeconfig: want the last created, guessed, got %q, %v, %v", name, guessed, err)
	}
	if err := GuessedError(home, "delete"); !strings.Contains(err.Error(), "(newer, older)") || !strings.Contains(err.Error(), "name the one to delete") {
		t.Errorf("GuessedError: %v", err)
	}
	config := "apiVersion: v1\nkind: Config\ncurrent-context: older-admin@older\n"
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	if name, guessed, err := Current(home, kubeconfig); err != nil || name != "older" || guessed {
		t.Fatalf("two, the current context older's: got %q, %v, %v", name, guessed, err)
	}
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\ncurrent-context: slipway-dev\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if name, guessed, err := Current(home, kubeconfig); err != nil || name != "newer" || !guessed {
		t.Fatalf("two, another current context: want the last created, got %q, %v, %v", name, guessed, err)
	}
}

// TestKnownContext checks what delete says of a management cluster whose admin context the
// kubeconfig lacks: a name this host never made is refused with the names it made, one it made
// with the command that writes the context back; one whose context is there passes.
func TestKnownContext(t *testing.T) {
	home := t.TempDir()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	config := "apiVersion: v1\nkind: Config\ncontexts:\n- name: other-admin@other\n  context: {cluster: other, user: other}\n"
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	err := knownContext(home, kubeconfig, "nosuch")
	if err == nil || err.Error() != "no management cluster nosuch: the kubeconfig "+kubeconfig+" has no context nosuch-admin@nosuch; this host created none" {
		t.Errorf("no management cluster made here: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(home, "management"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(SavedKubeconfig(home, "mgmt"), []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := knownContext(home, kubeconfig, "nosuch"); err == nil || !strings.HasSuffix(err.Error(), "; the management clusters this host created: mgmt") {
		t.Errorf("a misspelt name: %v", err)
	}
	if err := knownContext(home, kubeconfig, "mgmt"); err == nil || !strings.Contains(err.Error(), "`slipway management-cluster kubeconfig get mgmt --admin` writes it") {
		t.Errorf("a management cluster made here, its context removed: %v", err)
	}
	if err := knownContext(home, kubeconfig, "other"); err != nil {
		t.Errorf("a management cluster whose context is there: %v", err)
	}
}
