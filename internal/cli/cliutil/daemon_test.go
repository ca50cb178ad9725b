package cliutil

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// fakeDaemon records what the verbs asked of it.
type fakeDaemon struct {
	pid       int
	startedAt string
	stops     int
}

func (f *fakeDaemon) Running() (int, bool) { return f.pid, f.pid != 0 }

func (f *fakeDaemon) Start(_ context.Context, address string) (bool, error) {
	f.startedAt, f.pid = address, 42
	return true, nil
}

func (f *fakeDaemon) Stop() (bool, error) {
	f.stops++
	ran := f.pid != 0
	f.pid = 0
	return ran, nil
}

func TestDaemonVerbs(t *testing.T) {
	d := &fakeDaemon{}
	out := &bytes.Buffer{}
	start, stop := DaemonVerbs[*fakeDaemon]{What: "The thing", Open: func() (*fakeDaemon, error) { return d, nil },
		DefaultAddress: "127.0.0.1:1", Serving: func(w io.Writer, d *fakeDaemon) error {
			_, err := fmt.Fprintf(w, "serving at %s, pid %d\n", d.startedAt, d.pid)
			return err
		}}.Commands(genericiooptions.IOStreams{Out: out, ErrOut: out})
	run := func(args ...string) string {
		t.Helper()
		out.Reset()
		cmd := start
		if args[0] == "stop" {
			cmd = stop
		}
		cmd.SetArgs(args[1:])
		if err := cmd.ExecuteContext(t.Context()); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String()
	}

	if got := run("start", "--address", "127.0.0.1:7"); got != "serving at 127.0.0.1:7, pid 42\n" || d.startedAt != "127.0.0.1:7" {
		t.Errorf("start: printed %q, started at %q", got, d.startedAt)
	}
	// A second start starts nothing and says the process runs, where it serves.
	if got := run("start", "--address", "127.0.0.1:8"); got != "The thing already runs (pid 42)\nserving at 127.0.0.1:7, pid 42\n" {
		t.Errorf("start while it runs: printed %q", got)
	}
	if got := run("stop"); got != "" || d.stops != 1 {
		t.Errorf("stop: printed %q, %d stops", got, d.stops)
	}
	if got := run("stop"); got != "The thing does not run\n" {
		t.Errorf("stop while it does not run: printed %q", got)
	}
}
