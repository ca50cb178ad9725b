// Package progress is the one printer of slipway's client flows, after TKG's logger: progress
// lines at verbosity 0 on the terminal, detail at higher levels when -v asks for it, and
// everything up to max(4, -v) in a log file with a klog-style header, together with the logs of
// the libraries (klog, client-go's throttling notices, controller-runtime) that would otherwise
// interleave with the progress lines.
package progress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// LogFileLevel is the lowest highest level the log file gets, as TKG's --log-file.
const LogFileLevel = 4

// Printer prints a flow's progress. Nil prints nothing.
type Printer struct {
	*state
	// offset is added to the level of every line: see Detail.
	offset int
	// steps are this printer's own steps, not its Detail printers'.
	steps []StepTime
}

// state is what a printer and its Detail printers share.
type state struct {
	out       io.Writer
	verbosity int
	mu        sync.Mutex
	log       io.Writer
	logFile   *os.File
	// audit is the cluster's audit log, which gets every line (Audit).
	audit *os.File
	// watch is told of every step's start and end (WatchSteps).
	watch func(StepEvent)
}

// StepEvent is a step starting (Done false) or ending, with its duration and error.
type StepEvent struct {
	Name     string
	Done     bool
	Duration time.Duration
	Err      error
	// Depth is 0 for a step of the watched printer, 1 for one of its Detail printer (a part of
	// one of its steps), and so on.
	Depth int
}

// WatchSteps has f told of every step's start and end, of this printer and its Detail
// printers, as the installer UI shows them; f must not print through the printer.
func (p *Printer) WatchSteps(f func(StepEvent)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watch = f
}

func (p *Printer) stepEvent(e StepEvent) {
	if p == nil {
		return
	}
	p.mu.Lock()
	watch := p.watch
	p.mu.Unlock()
	if watch != nil {
		watch(e)
	}
}

// depth is how many Detail calls made the printer.
func (p *Printer) depth() int {
	if p == nil {
		return 0
	}
	return p.offset
}

// StepTime is how long one named step took.
type StepTime struct {
	Name     string
	Duration time.Duration
	Failed   bool
}

// New returns a printer of the lines up to verbosity on out, and, when logPath is not empty,
// of the lines up to max(LogFileLevel, verbosity) in the file at logPath, which it creates with
// its directory.
func New(out io.Writer, verbosity int, logPath string) (*Printer, error) {
	if verbosity < 0 || verbosity > 9 {
		return nil, fmt.Errorf("verbosity %d is out of range: use 0 to 9", verbosity)
	}
	p := &Printer{state: &state{out: out, verbosity: verbosity}}
	if logPath == "" {
		return p, nil
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return nil, fmt.Errorf("failed to create the log directory: %w", err)
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("failed to open the log file: %w", err)
	}
	p.log, p.logFile = f, f
	return p, nil
}

// NewLogFile creates a log file of its own in dir, named prefix, the UTC time and a random number
// (management-cluster-create-20261204T124707123456789.log), as TKG names its logs, so that two
// runs started in the same second never share one; it returns the file's path.
func NewLogFile(dir, prefix string, now time.Time) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("failed to create the log directory: %w", err)
	}
	f, err := os.CreateTemp(dir, prefix+now.UTC().Format("20060102T150405")+"*.log")
	if err != nil {
		return "", fmt.Errorf("failed to create a log file: %w", err)
	}
	return f.Name(), f.Close()
}

// ForWriter returns a printer of the lines at verbosity 0 on out, and no log file: what tests
// and library callers without a terminal use.
func ForWriter(out io.Writer) *Printer { return &Printer{state: &state{out: out}} }

// Detail returns a printer of the same terminal and log file whose lines are one level more
// detailed: what a flow uses for a sub-flow whose own progress lines are detail in its context
// (a bootstrap cluster's creation steps within management-cluster create).
func (p *Printer) Detail() *Printer {
	if p == nil {
		return nil
	}
	return &Printer{state: p.state, offset: p.offset + 1}
}

// Audit also writes every line, of every level, to the audit log of a cluster at path, as TKG
// keeps logs/<CLUSTER_NAME>.log for create, upgrade and delete; the lines before it are not in
// it. A second call changes nothing.
func (p *Printer) Audit(path string) error {
	if p == nil || p.audit != nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("failed to create the audit log's directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("failed to open the audit log: %w", err)
	}
	p.mu.Lock()
	p.audit = f
	p.mu.Unlock()
	return nil
}

// AuditPath returns the audit log's path, or "" when there is none.
func (p *Printer) AuditPath() string {
	if p == nil || p.audit == nil {
		return ""
	}
	return p.audit.Name()
}

// Close closes the log file and the audit log.
func (p *Printer) Close() error {
	if p == nil {
		return nil
	}
	var errs []error
	if p.audit != nil {
		errs = append(errs, p.audit.Close())
	}
	if p.logFile != nil {
		errs = append(errs, p.logFile.Close())
	}
	return errors.Join(errs...)
}

// LogPath returns the log file's path, or "" when there is none.
func (p *Printer) LogPath() string {
	if p == nil || p.logFile == nil {
		return ""
	}
	return p.logFile.Name()
}

// Infof prints a progress line (level 0). A newline is added when the line has none.
func (p *Printer) Infof(format string, args ...any) { p.V(0).Infof(format, args...) }

// V returns the printer of one level: its lines reach the terminal when the verbosity is at
// least level, and the log file when level is at most max(LogFileLevel, verbosity).
func (p *Printer) V(level int) Level {
	if p == nil {
		return Level{}
	}
	return Level{p: p, level: level + p.offset}
}

// Level prints the lines of one verbosity level.
type Level struct {
	p     *Printer
	level int
}

// Enabled says whether the level's lines go anywhere.
func (l Level) Enabled() bool {
	return l.p != nil && (l.level <= l.p.verbosity || (l.p.log != nil && l.level <= max(LogFileLevel, l.p.verbosity)) || l.p.audit != nil)
}

// Infof prints one line at the level.
func (l Level) Infof(format string, args ...any) {
	if !l.Enabled() {
		return
	}
	l.p.write(l.level, fmt.Sprintf(format, args...), true)
}

func (p *Printer) write(level int, msg string, terminal bool) {
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if terminal && level <= p.verbosity && p.out != nil {
		_, _ = io.WriteString(p.out, msg)
	}
	if p.log != nil && level <= max(LogFileLevel, p.verbosity) {
		_, _ = io.WriteString(p.log, header(time.Now())+msg)
	}
	if p.audit != nil {
		_, _ = io.WriteString(p.audit, header(time.Now())+msg)
	}
}

// header is klog's line header without the source file: I1124 03:52:54.201890] .
func header(t time.Time) string {
	return "I" + t.Format("0102 15:04:05.000000") + "] "
}

// RouteLibraryLogs sends the logs of the libraries a flow uses (klog, and so client-go's
// throttling notices; controller-runtime) to the log file only, never to the terminal, where
// they would interleave with the progress lines. It sets process-wide loggers: the CLI calls it
// once, for the printer of the command it runs.
func (p *Printer) RouteLibraryLogs() {
	l := logr.New(&sink{p: p, fileOnly: true})
	klog.SetLogger(l)
	ctrl.SetLogger(l)
}

// Step runs one named step of a flow and records how long it took, for Steps; the step prints
// its own progress lines. At level 1 it says when the step starts and ends. Its error is
// returned wrapped with the step's name, so that a failure says which step it was.
func (p *Printer) Step(name string, run func() error) error {
	start := time.Now()
	p.V(1).Infof("Step %q started", name)
	p.stepEvent(StepEvent{Name: name, Depth: p.depth()})
	err := run()
	d := time.Since(start)
	p.stepEvent(StepEvent{Name: name, Done: true, Duration: d, Err: err, Depth: p.depth()})
	if p != nil {
		p.mu.Lock()
		p.steps = append(p.steps, StepTime{Name: name, Duration: d, Failed: err != nil})
		p.mu.Unlock()
	}
	if err != nil {
		p.V(1).Infof("Step %q failed after %s: %v", name, d.Round(time.Millisecond), err)
		return fmt.Errorf("step %q failed: %w", name, err)
	}
	p.V(1).Infof("Step %q done in %s", name, d.Round(time.Millisecond))
	return nil
}

// A NamedStep is one part of a flow: its name, as a failure and the step times say it, and
// what it does.
type NamedStep struct {
	Name string
	Run  func(context.Context) error
}

// StepError is a flow that stopped at a step: which, and why.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return fmt.Sprintf("step %q failed: %v", e.Step, e.Err) }

func (e *StepError) Unwrap() error { return e.Err }

// Run runs a flow's steps in order, each timed as Step times it, and stops at the first that
// fails with a *StepError naming it. What the flow's user can do then (resume, clean up, look)
// is the flow's to say, from the step.
func (p *Printer) Run(ctx context.Context, steps ...NamedStep) error {
	for _, s := range steps {
		var failed error
		_ = p.Step(s.Name, func() error {
			failed = s.Run(ctx)
			return failed
		})
		if failed != nil {
			return &StepError{Step: s.Name, Err: failed}
		}
	}
	return nil
}

// Announced returns the steps with kind's lines around each one's work, as `local cluster
// create` shows them: " • NAME ...", then " ✓ NAME" or " ✗ NAME".
func (p *Printer) Announced(steps ...NamedStep) []NamedStep {
	out := make([]NamedStep, len(steps))
	for i, s := range steps {
		out[i] = NamedStep{Name: s.Name, Run: func(ctx context.Context) error {
			p.Infof(" • %s ...", s.Name)
			if err := s.Run(ctx); err != nil {
				p.Infof(" ✗ %s", s.Name)
				return err
			}
			p.Infof(" ✓ %s", s.Name)
			return nil
		}}
	}
	return out
}

// Steps returns the steps run so far with their durations.
func (p *Printer) Steps() []StepTime {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.steps)
}

// Logger returns a logr.Logger that prints through the printer: a message then its key/value
// pairs as key="value", at the logger's level, as TKG shows clusterctl's log lines.
func (p *Printer) Logger() logr.Logger {
	return logr.New(&sink{p: p})
}

type sink struct {
	p      *Printer
	values []any
	// fileOnly sends every line to the log file only: the sink of library logs.
	fileOnly bool
}

func (s *sink) Init(logr.RuntimeInfo)  {}
func (s *sink) Enabled(level int) bool { return s.p.V(level).Enabled() }

// level is the printer's level of a logger's level.
func (s *sink) level(level int) int          { return s.p.V(level).level }
func (s *sink) WithName(string) logr.LogSink { return s }
func (s *sink) WithValues(kvs ...any) logr.LogSink {
	return &sink{p: s.p, values: append(slices.Clone(s.values), kvs...), fileOnly: s.fileOnly}
}

func (s *sink) Info(level int, msg string, kvs ...any) {
	if s.Enabled(level) {
		s.p.write(s.level(level), s.format(msg, kvs), !s.fileOnly)
	}
}

func (s *sink) Error(err error, msg string, kvs ...any) {
	if s.Enabled(0) {
		s.p.write(s.level(0), s.format(fmt.Sprintf("Error: %s: %v", msg, err), kvs), !s.fileOnly)
	}
}

func (s *sink) format(msg string, kvs []any) string {
	var b strings.Builder
	b.WriteString(msg)
	all := append(slices.Clone(s.values), kvs...)
	for i := 0; i+1 < len(all); i += 2 {
		if v, ok := all[i+1].(string); ok {
			fmt.Fprintf(&b, " %v=%q", all[i], v)
		} else {
			fmt.Fprintf(&b, " %v=%v", all[i], all[i+1])
		}
	}
	return b.String()
}
