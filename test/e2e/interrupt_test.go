package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/local/vm"
)

// lockedBuffer is an output buffer a test reads while the command writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// interruptedCreate starts `management-cluster create` with args, waits until it prints line,
// calls interrupt with the name of its bootstrap cluster, and returns what it printed once it
// exited, which it must do with a failure within a minute and a half.
func interruptedCreate(t *testing.T, line string, interrupt func(cmd *exec.Cmd, bootstrap string), args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, slipway, append([]string{"management-cluster", "create"}, args...)...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	boot := regexp.MustCompile(`tkg-kind-[a-z0-9]{12}`)
	eventually(t, 5*time.Minute, fmt.Sprintf("create printing %q", line), func() error {
		select {
		case err := <-exited:
			t.Fatalf("create exited (%v) before %q:\n%s", err, line, out)
		default:
		}
		if !strings.Contains(out.String(), line) || boot.FindString(out.String()) == "" {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	interrupt(cmd, boot.FindString(out.String()))
	select {
	case err := <-exited:
		if err == nil {
			t.Fatalf("an interrupted create succeeded:\n%s", out)
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("create did not stop within 90s of the interruption:\n%s", out)
	}
	return out.String()
}

// checkFailureCleanedUp checks that a failed create's message names the step, the cause, the
// ways out and the log, runs the cleanup command it names, and checks that the bootstrap cluster
// it names is gone.
func checkFailureCleanedUp(t *testing.T, out, step, cause string, store cluster.Store) {
	t.Helper()
	for _, want := range []string{fmt.Sprintf("step %q failed: ", step), cause, "To resume with the kept bootstrap cluster:",
		"To clean up the bootstrap cluster and what it made:", "The full log is "} {
		if !strings.Contains(out, want) {
			t.Errorf("the failure lacks %q:\n%s", want, out)
		}
	}
	cleanup := regexp.MustCompile("slipway local cluster delete (tkg-kind-[a-z0-9]+)").FindStringSubmatch(out)
	if cleanup == nil {
		t.Fatalf("the failure names no cleanup command:\n%s", out)
	}
	if o, err := runSlipway(t, "local", "cluster", "delete", cleanup[1]); err != nil {
		t.Fatalf("the cleanup command: %v\n%s", err, o)
	}
	after, _ := store.List()
	if slices.ContainsFunc(after, func(s *cluster.Spec) bool { return s.Name == cleanup[1] }) {
		t.Errorf("the cleanup command left local cluster %s", cleanup[1])
	}
}

// killCluster kills every process of a local cluster with SIGKILL, as a power cut would: its
// nodes' init processes and every process in their cgroups (containerd, the kubelet and the
// containers, the local provider among them, which would otherwise start the node again), and
// whatever else mentions its directory.
func killCluster(t *testing.T, store cluster.Store, name string) {
	t.Helper()
	dirs, err := store.Dirs(name)
	if err != nil {
		t.Fatal(err)
	}
	pids := proc.Using(dirs.Root)
	if spec, err := cluster.ReadSpec(dirs); err == nil && spec.Real() {
		for _, n := range spec.Nodes {
			pids = append(pids, nodeProcesses(t, dirs.Node(n.Name))...)
		}
	}
	if len(pids) == 0 {
		t.Fatalf("no process of %s to kill", name)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// nodeProcesses returns the processes of the real node at dir: its init process first, then
// every process of its cgroups.
func nodeProcesses(t *testing.T, dir string) []int {
	t.Helper()
	var pids []int
	if pid, ok := vm.Running(dir); ok {
		pids = append(pids, pid)
	}
	processes, err := vm.Processes(dir)
	if err != nil {
		t.Fatal(err)
	}
	return append(pids, processes...)
}
