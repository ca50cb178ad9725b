package kubeconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// entry is a kubeconfig of one context, NAME, with its cluster and user of the same name.
func entry(name string) *clientcmdapi.Config {
	return &clientcmdapi.Config{
		Clusters:  map[string]*clientcmdapi.Cluster{name: {Server: "https://" + name + ".example:6443"}},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{name: {Token: name}},
		Contexts:  map[string]*clientcmdapi.Context{name: {Cluster: name, AuthInfo: name}},
	}
}

// TestMergeAndRemove: a merge creates the file (0600) and sets the current context only when
// asked; a removal takes the context, and its cluster and user unless another context names
// them, and unsets the current context it was.
func TestMergeAndRemove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kube", "config")
	if err := Merge(path, entry("a"), "a"); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the new file: %v %v", info, err)
	}
	if err := Merge(path, entry("b"), ""); err != nil {
		t.Fatal(err)
	}
	shared := entry("c")
	shared.Contexts["c"].Cluster = "a"
	delete(shared.Clusters, "c")
	if err := Merge(path, shared, ""); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "a" || len(cfg.Contexts) != 3 || cfg.Clusters["b"].Server != "https://b.example:6443" {
		t.Fatalf("after three merges: current %q, contexts %v", cfg.CurrentContext, cfg.Contexts)
	}

	if err := RemoveContext(path, "a"); err != nil {
		t.Fatal(err)
	}
	cfg, err = clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "" || cfg.Contexts["a"] != nil || cfg.AuthInfos["a"] != nil || cfg.Clusters["a"] == nil {
		t.Errorf("a removed: current %q, contexts %v, users %v, clusters %v (c still names cluster a)", cfg.CurrentContext, cfg.Contexts, cfg.AuthInfos, cfg.Clusters)
	}
	if err := RemoveContext(path, "nope"); err != nil {
		t.Errorf("removing a missing context: %v", err)
	}
	if err := RemoveContext(filepath.Join(t.TempDir(), "none"), "a"); err != nil {
		t.Errorf("removing from a missing file: %v", err)
	}
}

// TestConcurrentMergesKeepEveryEntry: commands merging into one file at once (the e2e suite's
// clusters, a user's two terminals) each keep their entry: no read-modify-write loses another's.
func TestConcurrentMergesKeepEveryEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- Merge(path, entry(fmt.Sprintf("c%d", i)), "")
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Contexts) != n || len(cfg.Clusters) != n || len(cfg.AuthInfos) != n {
		t.Errorf("%d merges left %d contexts, %d clusters, %d users", n, len(cfg.Contexts), len(cfg.Clusters), len(cfg.AuthInfos))
	}
	if _, err := os.Stat(path + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the lock is left: %v", err)
	}
}

// TestAStaleLockIsNamed: a lock no command releases ends the wait with the file to remove.
func TestAStaleLockIsNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := Merge(path, entry("a"), ""); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { lockWait = d }(lockWait)
	lockWait = 300 * time.Millisecond
	if err := os.WriteFile(path+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := RemoveContext(path, "a")
	if err == nil || !strings.Contains(err.Error(), "remove "+path+".lock") {
		t.Errorf("want an error naming the lock to remove, got %v", err)
	}
}
