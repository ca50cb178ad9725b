package cluster

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/local/hostlimits"
)

func TestStateStatus(t *testing.T) {
	spec := &Spec{Name: "boot", LoadBalancerIP: "127.1.0.1", Nodes: []NodeSpec{{Name: "boot-control-plane"}, {Name: "boot-worker"}}}
	for _, tc := range []struct {
		name  string
		state State
		want  string
	}{
		{"all running", State{Spec: spec, NodesRunning: 2, LoadBalancerRunning: true}, "Running"},
		{"nothing runs", State{Spec: spec}, "Stopped"},
		{"a node down", State{Spec: spec, NodesRunning: 1, LoadBalancerRunning: true}, "Degraded (1/2 nodes running)"},
		{"load balancer down", State{Spec: spec, NodesRunning: 2}, "Degraded (load balancer stopped)"},
		// An agent killed with SIGKILL leaves the node's API server serving: not Stopped.
		{"agent killed, its processes run", State{Spec: spec, NodesRunning: 1, Orphaned: []string{"boot-worker"}, LoadBalancerRunning: true},
			"Degraded (1/2 nodes running, agent down on boot-worker, its processes still run)"},
		{"every agent killed", State{Spec: spec, Orphaned: []string{"boot-control-plane", "boot-worker"}, LoadBalancerRunning: true},
			"Degraded (0/2 nodes running, agent down on boot-control-plane, boot-worker, its processes still run)"},
	} {
		if got := tc.state.Status(); got != tc.want {
			t.Errorf("%s: Status() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestHostLimitShows checks that a host limit a node's process met shows in `list` while it is
// recent, and not after.
func TestHostLimitShows(t *testing.T) {
	s := Store{Root: t.TempDir()}
	dirs, err := s.Dirs("boot")
	if err != nil {
		t.Fatal(err)
	}
	spec := &Spec{Name: "boot", Nodes: []NodeSpec{{Name: "boot-control-plane"}}}
	if err := os.MkdirAll(dirs.Node("boot-control-plane"), 0o700); err != nil {
		t.Fatal(err)
	}
	f := hostlimits.Finding{Limits: "fs.inotify.max_user_watches", Line: "inotify_add_watch: no space left on device"}
	if err := RecordHostLimit(dirs, "boot-control-plane", "pod cert-manager/webhook container webhook", f); err != nil {
		t.Fatal(err)
	}
	st := s.Inspect(spec)
	st.NodesRunning, st.LoadBalancerRunning = 1, true
	if got := st.Status(); !strings.HasPrefix(got, "Degraded (pod cert-manager/webhook container webhook on boot-control-plane met a host limit (fs.inotify.max_user_watches)") {
		t.Errorf("Status() = %q", got)
	}
	old := time.Now().Add(-hostLimitRecent - time.Minute)
	if err := os.Chtimes(dirs.NodeHostLimit("boot-control-plane"), old, old); err != nil {
		t.Fatal(err)
	}
	st = s.Inspect(spec)
	st.NodesRunning, st.LoadBalancerRunning = 1, true
	if got := st.Status(); got != "Running" {
		t.Errorf("an old host limit still shows: %q", got)
	}
}
