package node

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/local/hostlimits"
)

// exit is how a process ended.
type exit struct {
	code     int
	signal   string
	finished time.Time
}

// process is one running child. done is closed when it has exited; result says how.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}
	result  exit
}

// startProcess starts args with env, output appended to logPath.
func startProcess(args, env []string, logPath string) (*process, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("failed to start %s: %w", filepath.Base(args[0]), err)
	}
	p := &process{cmd: cmd, started: time.Now(), done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		logFile.Close()
		e := exit{finished: time.Now()}
		if err != nil {
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
				e.code = ws.ExitStatus()
				if ws.Signaled() {
					e.signal = ws.Signal().String()
					e.code = 128 + int(ws.Signal())
				}
			} else {
				e.code = 1
			}
		}
		p.result = e
		close(p.done)
	}()
	return p, nil
}

// stop sends SIGTERM, waits up to grace and kills the process if it still runs.
func (p *process) stop(grace time.Duration) exit {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return p.result
}

// backoff doubles the wait between restarts from initial up to max, and starts again after ten
// minutes of running. The kubelet's crash-loop back-off is 10s to 5m.
type backoff struct {
	initial, max time.Duration
	next         time.Duration
}

func crashLoopBackoff() *backoff { return &backoff{initial: 10 * time.Second, max: 5 * time.Minute} }

func (b *backoff) after(ranFor time.Duration) time.Duration {
	if ranFor > 10*time.Minute || b.next == 0 {
		b.next = b.initial
	} else {
		b.next = min(2*b.next, b.max)
	}
	return b.next
}

// supervised keeps one static component running: restarted with back-off when it exits, stopped
// when the context ends.
type supervised struct {
	name    string
	args    []string
	env     []string
	logPath string
	// grace is how long the process has after SIGTERM when the context ends; zero is 30 s.
	grace time.Duration
	// onHostLimit is told when the process failed on a host limit, as its log says.
	onHostLimit func(hostlimits.Finding)

	mu       sync.Mutex
	running  bool
	started  time.Time
	restarts int
	lastExit *exit
}

func (s *supervised) run(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx).WithValues("component", s.name)
	// Static components wait on each other (the API server on etcd) while a node starts, so
	// they restart sooner than pods do.
	b := &backoff{initial: time.Second, max: 20 * time.Second}
	for {
		p, err := startProcess(s.args, s.env, s.logPath)
		if err != nil {
			log.Error(err, "Failed to start")
		} else {
			s.set(func() { s.running, s.started = true, p.started })
			select {
			case <-ctx.Done():
				p.stop(cmp.Or(s.grace, 30*time.Second))
				s.set(func() { s.running = false })
				return
			case <-p.done:
				e := p.result
				log.Info("Exited", "code", e.code, "signal", e.signal)
				s.set(func() { s.running, s.lastExit = false, &e; s.restarts++ })
				if e.code != 0 && s.onHostLimit != nil {
					// Only a failure's log is read: a clean exit met no limit.
					if f, ok := hostlimits.ExplainFile(s.logPath); ok {
						log.Info("The component failed on a host limit", "limits", f.Limits, "line", f.Line)
						s.onHostLimit(f)
					}
				}
			}
		}
		var ranFor time.Duration
		if p != nil {
			ranFor = time.Since(p.started)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(b.after(ranFor)):
		}
	}
}

func (s *supervised) set(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// state returns whether the component runs, since when, how often it restarted and how it last
// ended.
func (s *supervised) state() (running bool, started time.Time, restarts int, last *exit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, s.started, s.restarts, s.lastExit
}
