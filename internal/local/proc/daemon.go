package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Daemon is a background process of slipway's own (the local registry, the vCenter simulator):
// started detached from the command that starts it, its pid in Dir/Name.pid and its output in
// Dir/Name.log, and known as running only while that pid's arguments begin with RunArgs.
type Daemon struct {
	// Dir holds its pid file and log.
	Dir string
	// Name is the base of the pid file's and the log's names.
	Name string
	// What names the daemon in errors: "the registry".
	What string
	// RunArgs begin its command line, the program aside: `slipway local registry run`.
	RunArgs []string
	// Executable is the slipway binary to run; empty means this one.
	Executable string
}

// PIDPath is the daemon's pid file.
func (d Daemon) PIDPath() string { return filepath.Join(d.Dir, d.Name+".pid") }

// LogPath is the daemon's log.
func (d Daemon) LogPath() string { return filepath.Join(d.Dir, d.Name+".log") }

// Running returns the daemon's pid, when it runs.
func (d Daemon) Running() (int, bool) {
	if !Alive(d.PIDPath(), d.RunArgs) {
		return 0, false
	}
	return ReadPID(d.PIDPath()), true
}

// Start runs the executable with RunArgs' subcommand and args, unless the daemon runs already,
// and polls ready every interval, up to timeout, until it says the daemon serves. It fails at
// once when the process exits, naming the log. It says whether it started one.
func (d Daemon) Start(ctx context.Context, args []string, interval, timeout time.Duration, ready func(context.Context) bool) (bool, error) {
	if len(d.RunArgs) == 0 {
		return false, fmt.Errorf("%s has no RunArgs: its command line cannot be told from another's", d.What)
	}
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
	command := append(append([]string{exe}, d.RunArgs[1:]...), args...)
	if _, err := SpawnDetached(command, d.LogPath(), d.PIDPath()); err != nil {
		return false, err
	}
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		if _, ok := d.Running(); !ok {
			return false, errors.New("it exited")
		}
		return ready(ctx), nil
	})
	if err != nil {
		return true, fmt.Errorf("%s did not start (%w): see %s", d.What, err, d.LogPath())
	}
	return true, nil
}

// Stop ends the daemon: SIGTERM, then SIGKILL after grace. It says whether one was running.
func (d Daemon) Stop(grace time.Duration) (bool, error) {
	pid, ok := d.Running()
	if !ok {
		return false, nil
	}
	return true, Terminate([]int{pid}, grace)
}
