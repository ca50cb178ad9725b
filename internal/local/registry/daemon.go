package registry

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

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

func (d Daemon) data() string    { return filepath.Join(d.Dir, "data") }
func (d Daemon) pidPath() string { return filepath.Join(d.Dir, "registry.pid") }

// LogPath is the registry process's log.
func (d Daemon) LogPath() string { return filepath.Join(d.Dir, "registry.log") }

// Running returns the pid of the registry's process, when it runs.
func (d Daemon) Running() (int, bool) {
	if !proc.Alive(d.pidPath(), RunArgs) {
		return 0, false
	}
	return proc.ReadPID(d.pidPath()), true
}

// Start starts the registry on address unless it runs already, and waits until it answers.
// It says whether it started one.
func (d Daemon) Start(ctx context.Context, address string) (bool, error) {
	if _, ok := d.Running(); ok {
		return false, nil
	}
	if err := os.MkdirAll(d.Dir, 0o700); err != nil {
		return false, err
	}
	exe := d.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return false, err
		}
	}
	if _, err := proc.SpawnDetached([]string{exe, "local", "registry", "run", "--address", address, "--dir", d.data()}, d.LogPath(), d.pidPath()); err != nil {
		return false, err
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		resp, err := http.Get("http://" + address + "/v2/")
		if err == nil {
			resp.Body.Close()
			return true, nil
		}
		if _, ok := d.Running(); !ok {
			return false, fmt.Errorf("it exited")
		}
		return false, nil
	})
	if err != nil {
		return true, fmt.Errorf("the registry did not start (%v): see %s", err, d.LogPath())
	}
	return true, nil
}

// Stop stops the registry; pushed bundles are kept. It says whether one was running.
func (d Daemon) Stop() (bool, error) {
	pid, ok := d.Running()
	if !ok {
		return false, nil
	}
	return true, proc.Terminate([]int{pid}, 10*time.Second)
}

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
