package registry

import (
	"context"
	"net/http"
	"path/filepath"
	"time"

	"github.com/slipway-dev/slipway/internal/local/proc"
)

// RunArgs begin the arguments of the registry's process: `slipway local registry run`.
var RunArgs = []string{"slipway", "local", "registry", "run"}

// Daemon is the registry run as a detached process of slipway, with its state in Dir: pushed
// bundles under data, its pid file and its log.
type Daemon struct {
	Dir string
	// Executable is the slipway binary to run; empty means this one.
	Executable string
}

func (d Daemon) data() string { return filepath.Join(d.Dir, "data") }

func (d Daemon) process() proc.Daemon {
	return proc.Daemon{Dir: d.Dir, Name: "registry", What: "the registry", RunArgs: RunArgs, Executable: d.Executable}
}

// LogPath is the registry process's log.
func (d Daemon) LogPath() string { return d.process().LogPath() }

// Running returns the pid of the registry's process, when it runs.
func (d Daemon) Running() (int, bool) { return d.process().Running() }

// Start starts the registry on address unless it runs already, and waits until it answers.
// It says whether it started one.
func (d Daemon) Start(ctx context.Context, address string) (bool, error) {
	return d.process().Start(ctx, []string{"--address", address, "--dir", d.data()}, 100*time.Millisecond, 10*time.Second, func(context.Context) bool {
		resp, err := (&http.Client{Timeout: time.Second}).Get("http://" + address + "/v2/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
}

// Stop stops the registry; pushed bundles are kept. It says whether one was running.
func (d Daemon) Stop() (bool, error) { return d.process().Stop(10 * time.Second) }

// Address returns the loopback address the running registry listens on, read from its
// arguments.
func (d Daemon) Address() (string, bool) {
	pid, ok := d.Running()
	if !ok {
		return "", false
	}
	args := proc.Cmdline(pid)
	for i, a := range args {
		if a == "--address" && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return DefaultAddress, true
}
