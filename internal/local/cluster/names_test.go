package cluster

import (
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/local/proc"
)

// refusedNames are names that must never reach the store, each with a word of the rule that
// refuses it.
var refusedNames = map[string]string{
	"":                      "empty",
	".":                     "DNS-1123 label",
	"..":                    "DNS-1123 label",
	"a/b":                   "DNS-1123 label",
	"../x":                  "DNS-1123 label",
	"../../../..":           "DNS-1123 label",
	"/abs":                  "DNS-1123 label",
	"UPPER":                 "DNS-1123 label",
	"-x":                    "DNS-1123 label",
	"x-":                    "DNS-1123 label",
	"a.b":                   "DNS-1123 label",
	"a b":                   "DNS-1123 label",
	strings.Repeat("a", 64): "at most 40",
	strings.Repeat("a", 41): "at most 40",
}

func TestValidateName(t *testing.T) {
	for name, rule := range refusedNames {
		err := ValidateName(name)
		if err == nil {
			t.Errorf("ValidateName(%q) accepted it", name)
			continue
		}
		if !strings.Contains(err.Error(), rule) {
			t.Errorf("ValidateName(%q) = %q, want the rule %q named", name, err, rule)
		}
	}
	for _, name := range []string{"a", "dev", "boot2", "tkg-mgmt-vc", "0", strings.Repeat("a", MaxNameLength)} {
		if err := ValidateName(name); err != nil {
			t.Errorf("ValidateName(%q) = %v, want it accepted", name, err)
		}
	}
	if err := ValidateNodeName(strings.Repeat("n", 64)); err == nil || !strings.Contains(err.Error(), "at most 63") {
		t.Errorf("ValidateNodeName of 64 characters = %v, want refused naming the limit", err)
	}
	if err := ValidateNodeName("wc-md-0-x7k2p-9qz4c"); err != nil {
		t.Errorf("ValidateNodeName of a Machine name = %v, want it accepted", err)
	}
}

// TestBadNamesTouchNothing runs every command of the store that takes a name with each refused
// name, and checks that each is refused with the rule named while a sentinel file beside the
// store, a cluster in it and that cluster's running process are untouched.
func TestBadNamesTouchNothing(t *testing.T) {
	home := t.TempDir()
	sentinel := filepath.Join(home, "sentinel")
	if err := os.WriteFile(sentinel, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Store{Root: filepath.Join(home, "store", "local")}
	kept := writeCluster(t, s, "kept", 1)
	process := runUsing(t, kept.Node("kept-control-plane"))

	ops := map[string]func(name string) error{
		"delete":      func(name string) error { return s.Delete(name, "") },
		"get":         func(name string) error { _, err := s.Get(name); return err },
		"kubeconfig":  func(name string) error { _, err := s.Kubeconfig(name); return err },
		"start":       func(name string) error { return s.Start(t.Context(), name, "/bin/false", time.Second) },
		"stop node":   func(name string) error { return s.StopNode("kept", name) },
		"node of":     func(name string) error { return s.StopNode(name, "kept-control-plane") },
		"start lb":    func(name string) error { _, err := s.StartLoadBalancer(name, "/bin/false"); return err },
		"create":      func(name string) error { return s.Create(t.Context(), CreateOptions{Name: name, ControlPlaneNodes: 1}) },
		"create node": func(name string) error { _, err := s.StartNode("kept", NodeSpec{Name: name}, "/bin/false"); return err },
	}
	for op, run := range ops {
		for name, rule := range refusedNames {
			if op == "stop node" || op == "create node" {
				if len(name) <= MaxNodeNameLength && rule == "at most 40" {
					continue // a valid node name
				}
				if len(name) > MaxNodeNameLength {
					rule = "at most 63"
				}
			}
			err := run(name)
			if err == nil || !strings.Contains(err.Error(), rule) {
				t.Errorf("%s %q = %v, want refused naming %q", op, name, err, rule)
			}
		}
	}
	if data, err := os.ReadFile(sentinel); err != nil || string(data) != "keep" {
		t.Errorf("the sentinel beside the store is gone or changed: %q, %v", data, err)
	}
	if _, err := s.Get("kept"); err != nil {
		t.Errorf("the cluster in the store is gone: %v", err)
	}
	if proc.Cmdline(process) == nil {
		t.Errorf("the cluster's process %d was stopped", process)
	}
}

// TestDeleteLeavesAClusterItsNamePrefixes checks that deleting boot neither stops a process of
// boot2 nor removes its state: processes are matched by exact arguments.
func TestDeleteLeavesAClusterItsNamePrefixes(t *testing.T) {
	s := Store{Root: t.TempDir()}
	boot := writeCluster(t, s, "boot", 1)
	boot2 := writeCluster(t, s, "boot2", 2)
	mine := runUsing(t, boot.Node("boot-control-plane"))
	other := runUsing(t, boot2.Root)
	if err := s.Delete("boot", ""); err != nil {
		t.Fatal(err)
	}
	if proc.Cmdline(mine) != nil {
		t.Errorf("the process %d of boot survives its delete", mine)
	}
	if proc.Cmdline(other) == nil {
		t.Errorf("deleting boot stopped the process %d of boot2", other)
	}
	if _, err := s.Get("boot2"); err != nil {
		t.Errorf("deleting boot removed boot2: %v", err)
	}
}

// FuzzDirs checks that no name the store accepts resolves outside it: its directory is a direct
// child of the store's root, named the name.
func FuzzDirs(f *testing.F) {
	for name := range refusedNames {
		f.Add(name)
	}
	for _, name := range []string{"dev", "a", "boot2", "x..y", "a/../b", "%2e%2e", "\x00", "a\\b", "~", "$HOME"} {
		f.Add(name)
	}
	root := f.TempDir()
	s := Store{Root: root}
	f.Fuzz(func(t *testing.T, name string) {
		dirs, err := s.Dirs(name)
		if err != nil {
			return
		}
		if filepath.Dir(dirs.Root) != root || filepath.Base(dirs.Root) != name {
			t.Fatalf("Dirs(%q) = %s, outside the store %s", name, dirs.Root, root)
		}
	})
}

const helperEnv = "SLIPWAY_TEST_HELPER_PROCESS"

// What the "rewrite" helper writes: the directory and the content of its spec file.
const (
	rewriteDirEnv  = "SLIPWAY_TEST_REWRITE_DIR"
	rewriteDataEnv = "SLIPWAY_TEST_REWRITE_DATA"
)

// TestMain runs the tests or a helper process: started by runUsing ("1"), one that sleeps until
// it is killed; "rewrite", one that writes a cluster's spec again and again, as a provider
// remaking a cluster it owns, until 200 ms after SIGTERM.
func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "1":
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	case "rewrite":
		// Asked to stop, it goes on for a moment, as a provider finishing what it had begun.
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		dir, until := os.Getenv(rewriteDirEnv), time.Time{}
		for until.IsZero() || time.Now().Before(until) {
			if os.MkdirAll(dir, 0o700) == nil {
				_ = os.WriteFile(filepath.Join(dir, SpecFile), []byte(os.Getenv(rewriteDataEnv)), 0o600)
			}
			select {
			case <-term:
				until = time.Now().Add(200 * time.Millisecond)
			case <-time.After(time.Millisecond):
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// writeCluster writes the spec of a one-node cluster and returns its directories.
func writeCluster(t *testing.T, s Store, name string, index int) Dirs {
	t.Helper()
	dirs, err := s.Dirs(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSpec(dirs, NewSpec(name, "v1.35.4", index, 1, 0)); err != nil {
		t.Fatal(err)
	}
	return dirs
}

// runUsing starts a process that takes path as an argument, as a node's processes take their
// node directory, and stops it when the test ends.
func runUsing(t *testing.T, path string) int {
	t.Helper()
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "--dir="+path+"/data")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// Start returns as the exec begins, before the kernel shows the new arguments: until then the
	// process would look gone.
	for deadline := time.Now().Add(5 * time.Second); !slices.Contains(proc.Cmdline(cmd.Process.Pid), "--dir="+path+"/data"); {
		if time.Now().After(deadline) {
			t.Fatalf("the helper process %d did not start", cmd.Process.Pid)
		}
		time.Sleep(time.Millisecond)
	}
	return cmd.Process.Pid
}
