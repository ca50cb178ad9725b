// Package proc starts and finds the processes of the local runtime: the detached init processes
// of nodes and load balancers that outlive the CLI, and slipway's background daemons (Daemon:
// the local registry, the vCenter simulator, the node service).
package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SpawnDetached starts the command in a session of its own, with output appended to logPath,
// writes its pid to pidPath and returns without waiting: the process outlives its parent.
func SpawnDetached(args []string, logPath, pidPath string) (int, error) {
	return SpawnDetachedIn(args, logPath, pidPath, 0)
}

// SpawnDetachedIn is SpawnDetached with the process cloned into the new namespaces of
// cloneflags (syscall.CLONE_NEWNS and the like), as a node of namespaces is started, holding
// files as its descriptors 3 and on.
func SpawnDetachedIn(args []string, logPath, pidPath string, cloneflags uintptr, files ...*os.File) (int, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return 0, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.ExtraFiles = files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Cloneflags: cloneflags}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("failed to start %s: %w", args[0], err)
	}
	pid := cmd.Process.Pid
	if err := os.WriteFile(pidPath, []byte(strconv.Itoa(pid)), 0o600); err != nil {
		return 0, err
	}
	// Reap the child if it exits while this process still runs.
	go func() { _ = cmd.Wait() }()
	// Start returns once the kernel has closed the child's close-on-exec pipe, which it does
	// before it sets up the new program's arguments: for a moment /proc/PID/cmdline is empty
	// and Alive calls the new process dead. Wait until they show, so that whoever checks next
	// (under the same lock) finds it running.
	for deadline := time.Now().Add(time.Second); len(Cmdline(pid)) == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return pid, nil
}

// WithLock runs f holding an exclusive lock on lockPath (created if missing), so that processes
// that check and then start the same thing (a load balancer) do it one at a time.
func WithLock(lockPath string, f func() error) error {
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o700); err != nil {
		return err
	}
	return WithLockIn(lockPath, f)
}

// Lock takes an exclusive lock on lockPath (created if missing, with its directory) and returns
// the function that releases it, which may be called more than once: for a lock held across
// steps, where WithLock's closure does not fit.
func Lock(lockPath string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o700); err != nil {
		return nil, err
	}
	return lockIn(lockPath)
}

// WithLockIn is WithLock in a directory that must exist: it is not made again, so a lock of a
// directory that was removed fails (os.ErrNotExist) rather than bringing the directory back.
func WithLockIn(lockPath string, f func() error) error {
	unlock, err := lockIn(lockPath)
	if err != nil {
		return err
	}
	defer unlock()
	return f()
}

// lockIn takes an exclusive lock on lockPath in a directory that exists; closing the file
// releases it.
func lockIn(lockPath string) (func(), error) {
	l, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(l.Fd()), syscall.LOCK_EX); err != nil {
		l.Close()
		return nil, fmt.Errorf("failed to lock %s: %w", lockPath, err)
	}
	var once sync.Once
	return func() { once.Do(func() { l.Close() }) }, nil
}

// ReadPID returns the pid in a pid file, or 0.
func ReadPID(pidPath string) int {
	data, err := os.ReadFile(pidPath)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0
	}
	return pid
}

// Cmdline returns the arguments of a running process, or nil when it does not run.
func Cmdline(pid int) []string {
	if pid <= 0 {
		return nil
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(data) == 0 {
		return nil
	}
	if isZombie(pid) {
		return nil
	}
	return strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
}

func isZombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(data, ')')
	return i < 0 || i+2 >= len(data) || data[i+2] == 'Z'
}

// Alive reports whether the process in pidPath runs and its arguments begin with args, compared
// argument by argument, the program path aside (a rebuilt binary keeps its path). This guards
// against a reused pid and against a process whose arguments merely contain these: a load
// balancer of --cluster-dir /x/boot2 is not one of /x/boot.
func Alive(pidPath string, args []string) bool {
	return beginsWith(Cmdline(ReadPID(pidPath)), args)
}

// WithArgs returns the pids of running processes, except this process, whose arguments begin
// with args as Alive compares them.
func WithArgs(args []string) []int {
	return matching(func(got []string) bool { return beginsWith(got, args) })
}

func beginsWith(got, args []string) bool {
	return len(args) > 0 && len(got) >= len(args) && slices.Equal(got[1:len(args)], args[1:])
}

// Mentioning returns the pids of running processes whose arguments contain marker as a
// substring, except this process. It is for diagnostics; the runtime finds its processes with
// Alive and Using, which never match a longer name.
func Mentioning(marker string) []int {
	return matching(func(args []string) bool { return strings.Contains(strings.Join(args, "\x00"), marker) })
}

// Using returns the pids of running processes, except this process, that take dir or a path
// under it as an argument or as a flag's value (--data-dir=DIR/etcd). A directory never matches
// another whose name it prefixes: /x/boot does not match /x/boot2.
func Using(dir string) []int {
	dir = filepath.Clean(dir)
	return matching(func(args []string) bool {
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				if _, v, ok := strings.Cut(a, "="); ok {
					a = v
				}
			}
			if a == dir || strings.HasPrefix(a, dir+"/") {
				return true
			}
		}
		return false
	})
}

func matching(match func(args []string) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if args := Cmdline(pid); args != nil && match(args) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Terminate sends SIGTERM to the processes, waits up to grace for them to exit and kills those
// still running. It returns an error naming any that survive.
func Terminate(pids []int, grace time.Duration) error {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if len(running(pids)) == 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range running(pids) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// A killed process may take a moment to exit: a large one, or one in the middle of disk I/O.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if len(running(pids)) == 0 {
			return nil
		}
	}
	return fmt.Errorf("processes %v survive SIGKILL", running(pids))
}

func running(pids []int) []int {
	var alive []int
	for _, pid := range pids {
		if Cmdline(pid) != nil {
			alive = append(alive, pid)
		}
	}
	return alive
}

// Output runs a command with stdin as its input and returns what it printed, or an error that
// carries what it printed on stderr.
func Output(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = bytes.NewReader(stdin), &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
