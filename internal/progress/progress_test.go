package progress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"
)

func TestLevelsReachTerminalAndLogFile(t *testing.T) {
	for _, verbosity := range []int{0, 2, 6} {
		var out bytes.Buffer
		path := filepath.Join(t.TempDir(), "logs", "run.log")
		p, err := New(&out, verbosity, path)
		if err != nil {
			t.Fatal(err)
		}
		for level := 0; level <= 9; level++ {
			p.V(level).Infof("line at %d", level)
		}
		p.Logger().V(1).Info("Installing", "provider", "cluster-api", "count", 3)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		logged, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for level := 0; level <= 9; level++ {
			line := "line at " + string(rune('0'+level)) + "\n"
			if got, want := strings.Contains(out.String(), line), level <= verbosity; got != want {
				t.Errorf("-v %d: level %d on the terminal: %v, want %v", verbosity, level, got, want)
			}
			if got, want := strings.Contains(string(logged), line), level <= max(LogFileLevel, verbosity); got != want {
				t.Errorf("-v %d: level %d in the log file: %v, want %v", verbosity, level, got, want)
			}
		}
		if got, want := strings.Contains(out.String(), `Installing provider="cluster-api" count=3`), verbosity >= 1; got != want {
			t.Errorf("-v %d: the logger's level-1 line on the terminal: %v, want %v:\n%s", verbosity, got, want, out.String())
		}
		if !regexp.MustCompile(`(?m)^I\d{4} \d\d:\d\d:\d\d\.\d{6}\] line at 0$`).Match(logged) {
			t.Errorf("-v %d: the log file's lines lack klog's header:\n%s", verbosity, logged)
		}
	}
}

func TestLibraryLogsGoToTheLogFileOnly(t *testing.T) {
	var out bytes.Buffer
	path := filepath.Join(t.TempDir(), "run.log")
	p, err := New(&out, 0, path)
	if err != nil {
		t.Fatal(err)
	}
	p.RouteLibraryLogs()
	t.Cleanup(klog.ClearLogger)
	klog.Info("Waited for 1.2s due to client-side throttling, not priority and fairness")
	klog.Flush()
	_ = p.Close()
	logged, _ := os.ReadFile(path)
	if strings.Contains(out.String(), "throttling") {
		t.Errorf("a library log line reached the terminal: %q", out.String())
	}
	if !strings.Contains(string(logged), "client-side throttling") {
		t.Errorf("a library log line is not in the log file:\n%s", logged)
	}
}

func TestStepsAreTimedAndNamed(t *testing.T) {
	p := ForWriter(&bytes.Buffer{})
	if err := p.Step("Creating bootstrap cluster", func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := p.Step("Installing providers", func() error { return boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), `step "Installing providers" failed: boom`) {
		t.Errorf("Step error = %v, want it to name the step and wrap the cause", err)
	}
	steps := p.Steps()
	if len(steps) != 2 || steps[0].Name != "Creating bootstrap cluster" || steps[0].Failed || !steps[1].Failed {
		t.Errorf("Steps() = %+v", steps)
	}
}

// TestRunStopsAtTheFailedStep: a flow's steps run in order, each timed; the first that fails
// stops it, named with its cause, and the later ones never run.
func TestRunStopsAtTheFailedStep(t *testing.T) {
	p := ForWriter(&strings.Builder{})
	var ran []string
	step := func(name string, err error) NamedStep {
		return NamedStep{Name: name, Run: func(ctx context.Context) error {
			if ctx.Value(ctxKey{}) != "flow" {
				t.Errorf("step %s did not get the flow's context", name)
			}
			ran = append(ran, name)
			return err
		}}
	}
	cause := errors.New("the API server went away")
	ctx := context.WithValue(t.Context(), ctxKey{}, "flow")
	err := p.Run(ctx, step("one", nil), step("two", cause), step("three", nil))
	var se *StepError
	if !errors.As(err, &se) || se.Step != "two" || !errors.Is(err, cause) || err.Error() != `step "two" failed: the API server went away` {
		t.Errorf("Run: %v, want step two's failure", err)
	}
	if strings.Join(ran, ",") != "one,two" {
		t.Errorf("ran %v, want one and two only", ran)
	}
	if steps := p.Steps(); len(steps) != 2 || steps[0].Failed || !steps[1].Failed {
		t.Errorf("step times %+v", steps)
	}
	if err := p.Run(ctx, step("four", nil)); err != nil {
		t.Errorf("a flow of steps that pass: %v", err)
	}
}

type ctxKey struct{}

func TestBadVerbosityIsRefused(t *testing.T) {
	for _, v := range []int{-1, 10} {
		if _, err := New(&bytes.Buffer{}, v, ""); err == nil || !strings.Contains(err.Error(), "0 to 9") {
			t.Errorf("New(-v %d) = %v, want refused naming the range", v, err)
		}
	}
}

func TestNilPrinterPrintsNothing(t *testing.T) {
	var p *Printer
	p.Infof("nothing")
	p.V(3).Infof("nothing")
	p.Logger().Info("nothing")
	if err := p.Step("x", func() error { return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestDetailPrintsOneLevelDeeperWithItsOwnSteps(t *testing.T) {
	var out bytes.Buffer
	path := filepath.Join(t.TempDir(), "run.log")
	p, err := New(&out, 0, path)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Detail()
	var watched []string
	p.WatchSteps(func(e StepEvent) {
		if e.Done {
			watched = append(watched, fmt.Sprintf("%s@%d", e.Name, e.Depth))
		}
	})
	_ = p.Step("outer", func() error {
		p.Infof("outer line")
		return d.Step("inner", func() error { d.Infof("inner line"); return nil })
	})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "outer line") || strings.Contains(out.String(), "inner line") {
		t.Errorf("at -v 0 the terminal shows the outer line only:\n%s", out.String())
	}
	logged, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logged), "inner line") {
		t.Errorf("the log file lacks the detail printer's line:\n%s", logged)
	}
	if steps := p.Steps(); len(steps) != 1 || steps[0].Name != "outer" {
		t.Errorf("the printer's steps are %+v, want only its own", steps)
	}
	if steps := d.Steps(); len(steps) != 1 || steps[0].Name != "inner" {
		t.Errorf("the detail printer's steps are %+v", steps)
	}
	if want := []string{"inner@1", "outer@0"}; !slices.Equal(watched, want) {
		t.Errorf("the watched steps' ends %v, want %v with their depths", watched, want)
	}
}

// TestAudit checks that the audit log gets every line of every level, from when it is opened.
func TestAudit(t *testing.T) {
	var term strings.Builder
	p, err := New(&term, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	p.Infof("before the audit log")
	path := filepath.Join(t.TempDir(), "logs", "wc.log")
	if err := p.Audit(path); err != nil {
		t.Fatal(err)
	}
	p.Infof("creating workload cluster 'wc'...")
	p.V(9).Infof("GET /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/wc")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); strings.Contains(s, "before the audit log") || !strings.Contains(s, "] creating workload cluster 'wc'...\n") ||
		!strings.Contains(s, "] GET /apis/cluster.x-k8s.io") {
		t.Errorf("audit log:\n%s", s)
	}
	if strings.Contains(term.String(), "GET /apis") || p.AuditPath() != path {
		t.Errorf("terminal:\n%s\naudit path %q", term.String(), p.AuditPath())
	}
}

// TestAnnouncedSteps: kind's lines surround each step, ✓ for one that passed and ✗ for the one
// that failed; the steps after it print nothing.
func TestAnnouncedSteps(t *testing.T) {
	out := &strings.Builder{}
	p := ForWriter(out)
	ok := NamedStep{Name: "Preparing nodes 📦", Run: func(context.Context) error { p.Infof("inside"); return nil }}
	failed := NamedStep{Name: "Joining worker nodes 🚜", Run: func(context.Context) error { return errors.New("node w did not boot") }}
	never := NamedStep{Name: "never", Run: func(context.Context) error { return nil }}
	if err := p.Run(t.Context(), p.Announced(ok, failed, never)...); err == nil || err.Error() != `step "Joining worker nodes 🚜" failed: node w did not boot` {
		t.Errorf("Run: %v", err)
	}
	want := " • Preparing nodes 📦 ...\ninside\n ✓ Preparing nodes 📦\n • Joining worker nodes 🚜 ...\n ✗ Joining worker nodes 🚜\n"
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
	// A flow without a printer (Progress nil) runs its steps silently.
	var silent *Printer
	if err := silent.Run(t.Context(), silent.Announced(never)...); err != nil {
		t.Errorf("Run without a printer: %v", err)
	}
}

func TestNewLogFileIsNeverShared(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	now := time.Date(2026, 12, 4, 12, 47, 7, 0, time.UTC)
	// Two runs started in the same second get a log each.
	first, err := NewLogFile(dir, "management-cluster-create-", now)
	if err != nil {
		t.Fatal(err)
	}
	second, err := NewLogFile(dir, "management-cluster-create-", now)
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^management-cluster-create-20261204T124707[0-9]+\.log$`)
	if first == second || !name.MatchString(filepath.Base(first)) || !name.MatchString(filepath.Base(second)) {
		t.Errorf("log files %s and %s: want two, named as TKG names its logs", first, second)
	}
}
