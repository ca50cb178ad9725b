package proc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/local/proc"
)

func TestDaemonStartsOnceAndStops(t *testing.T) {
	d := proc.Daemon{Dir: t.TempDir(), Name: "sleeper", What: "the sleeper", RunArgs: []string{"sleep", "60"}, Executable: "/bin/sleep"}
	looks := 0
	ready := func(context.Context) bool { looks++; return looks >= 3 }
	started, err := d.Start(t.Context(), nil, 10*time.Millisecond, 5*time.Second, ready)
	if err != nil || !started {
		t.Fatalf("Start: started %v, %v", started, err)
	}
	t.Cleanup(func() { _, _ = d.Stop(time.Second) })
	if looks < 3 {
		t.Errorf("Start returned after %d looks, before the daemon said it was ready", looks)
	}
	pid, ok := d.Running()
	if !ok || pid <= 0 {
		t.Fatalf("Running after Start: %d %v", pid, ok)
	}
	if again, err := d.Start(t.Context(), nil, 10*time.Millisecond, time.Second, ready); err != nil || again {
		t.Errorf("a second Start started %v (%v), want none while one runs", again, err)
	}
	if stopped, err := d.Stop(5 * time.Second); err != nil || !stopped {
		t.Fatalf("Stop: %v %v", stopped, err)
	}
	if _, ok := d.Running(); ok {
		t.Error("Running after Stop")
	}
	if stopped, err := d.Stop(time.Second); err != nil || stopped {
		t.Errorf("Stop of a stopped daemon: %v %v, want false, nil", stopped, err)
	}
}

func TestDaemonThatExitsNamesItsLog(t *testing.T) {
	d := proc.Daemon{Dir: t.TempDir(), Name: "quitter", What: "the quitter", RunArgs: []string{"false"}, Executable: "/bin/false"}
	_, err := d.Start(t.Context(), nil, 10*time.Millisecond, 5*time.Second, func(context.Context) bool { return false })
	if err == nil || !strings.Contains(err.Error(), "the quitter did not start (it exited)") || !strings.Contains(err.Error(), d.LogPath()) {
		t.Fatalf("Start of a daemon that exits: %v, want it named, why and its log", err)
	}
}
