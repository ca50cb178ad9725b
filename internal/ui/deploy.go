package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/client/managementcluster"
	"github.com/slipway-dev/slipway/internal/progress"
)

// States of a deploy.
const (
	stateRunning   = "running"
	stateSucceeded = "succeeded"
	stateFailed    = "failed"
)

// step is one step of the create flow as the deploy page shows it.
type step struct {
	Name    string  `json:"name"`
	State   string  `json:"state"`
	Seconds float64 `json:"seconds,omitempty"`
}

// failure is how a deploy failed, with the ways out the page offers.
type failure struct {
	Step  string `json:"step,omitempty"`
	Cause string `json:"cause"`
	// Bootstrap and BootstrapName are the bootstrap cluster the failed run kept: resume runs
	// the flow again on it, clean-up deletes it.
	Bootstrap     string `json:"bootstrap,omitempty"`
	BootstrapName string `json:"bootstrapName,omitempty"`
	CleanedUp     bool   `json:"cleanedUp,omitempty"`
}

// status is what GET /api/deploy answers and the log stream sends on every change.
type status struct {
	State   string   `json:"state"`
	File    string   `json:"file"`
	Log     string   `json:"log,omitempty"`
	Steps   []step   `json:"steps"`
	Failure *failure `json:"failure,omitempty"`
	// Next are the commands to run once the management cluster is made.
	Next []string `json:"next,omitempty"`
}

// deployment is one run of the create flow: its whole output, kept for every page that asks
// (a reload, a second tab), and its steps.
type deployment struct {
	mu sync.Mutex
	st status
	// data is the configuration file the run started from, written again for a resume: a
	// review since may have replaced the file.
	data    []byte
	lines   []string
	partial []byte
	tee     io.Writer
	// resumed is the kept bootstrap cluster a resume runs on: the flow, given it with -e, names
	// no bootstrap cluster of its own when it fails again, and the ways out stay this one's.
	resumed *failure
	// changed is closed, and replaced, on every change.
	changed chan struct{}
}

func newDeployment(file string, data []byte, tee io.Writer) *deployment {
	return &deployment{st: status{State: stateRunning, File: file, Steps: []step{}}, data: data, tee: tee, changed: make(chan struct{})}
}

// wait returns once the run ended.
func (d *deployment) wait() {
	for {
		_, st, changed := d.snapshot(0)
		if st.State != stateRunning {
			return
		}
		<-changed
	}
}

// notify wakes every stream; d.mu is held.
func (d *deployment) notify() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// Write takes the flow's progress lines.
func (d *deployment) Write(p []byte) (int, error) {
	_, _ = d.tee.Write(p)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.partial = append(d.partial, p...)
	for {
		i := bytes.IndexByte(d.partial, '\n')
		if i < 0 {
			break
		}
		// A carriage return would end a server-sent event's line.
		d.lines = append(d.lines, strings.ReplaceAll(string(d.partial[:i]), "\r", ""))
		d.partial = d.partial[i+1:]
	}
	d.notify()
	return len(p), nil
}

// step records a step of the flow starting or ending; the parts of a step (a Detail printer's
// steps, such as the bootstrap cluster's own) are in the log only.
func (d *deployment) step(e progress.StepEvent) {
	if e.Depth > 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !e.Done {
		d.st.Steps = append(d.st.Steps, step{Name: e.Name, State: stateRunning})
	} else {
		for i := len(d.st.Steps) - 1; i >= 0; i-- {
			if d.st.Steps[i].Name == e.Name && d.st.Steps[i].State == stateRunning {
				d.st.Steps[i].State, d.st.Steps[i].Seconds = "done", e.Duration.Round(100*time.Millisecond).Seconds()
				if e.Err != nil {
					d.st.Steps[i].State = stateFailed
				}
				break
			}
		}
	}
	d.notify()
}

// finish records how the run ended, and on success the commands to run next.
func (d *deployment) finish(next []string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		d.st.State, d.st.Next = stateSucceeded, next
	} else {
		d.st.State = stateFailed
		f := &failure{Cause: err.Error()}
		var e *managementcluster.Error
		if errors.As(err, &e) {
			f.Step, f.Cause, f.Bootstrap, f.BootstrapName = e.Step, e.Err.Error(), e.Bootstrap, e.BootstrapName
		}
		if f.Bootstrap == "" && d.resumed != nil {
			f.Bootstrap, f.BootstrapName = d.resumed.Bootstrap, d.resumed.BootstrapName
		}
		d.st.Failure = f
	}
	d.notify()
}

// snapshot returns the lines from the index from on, the status, and what will be closed on
// the next change.
func (d *deployment) snapshot(from int) ([]string, status, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.st
	st.Steps = make([]step, len(d.st.Steps))
	copy(st.Steps, d.st.Steps)
	if d.st.Failure != nil {
		f := *d.st.Failure
		st.Failure = &f
	}
	return append([]string(nil), d.lines[min(from, len(d.lines)):]...), st, d.changed
}

func (s *Server) current() *deployment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run
}

// busy says why no deploy can start now, or nil; s.mu is held.
func (s *Server) busy() error {
	if s.cleaning {
		return errors.New("the failed run's bootstrap cluster is being deleted: wait for it")
	}
	if s.run != nil {
		if _, st, _ := s.run.snapshot(0); st.State == stateRunning {
			return errConflict
		}
	}
	return nil
}

// start runs the flow on a saved configuration file in the background (its content data, kept
// for a resume); resumed is the kept bootstrap cluster to resume on, or nil.
func (s *Server) start(file string, data []byte, resumed *failure) (*deployment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.busy(); err != nil {
		return nil, err
	}
	d := newDeployment(file, data, s.o.Log)
	d.resumed = resumed
	flow := "management-cluster-create-"
	if s.o.Workload != nil {
		flow = "cluster-create-"
	}
	logFile, err := progress.NewLogFile(filepath.Join(s.o.Home, "logs"), flow, s.o.Now())
	if err != nil {
		return nil, err
	}
	p, err := progress.New(d, 0, logFile)
	if err != nil {
		return nil, err
	}
	p.WatchSteps(d.step)
	d.st.Log = p.LogPath()
	s.run = d
	go func() {
		defer p.Close()
		p.Infof("Logs of the command execution can also be found at: %s", p.LogPath())
		useExisting := ""
		if resumed != nil {
			useExisting = resumed.Bootstrap
		}
		next, err := s.runFlow(file, useExisting, p)
		if err != nil {
			// As the command prints it when it exits.
			fmt.Fprintf(d, "Error: %v\n", err)
		}
		d.finish(next, err)
	}()
	return d, nil
}

// runFlow runs the flow of a deploy on its saved file: the management cluster's create, or, for
// `slipway ui`, the workload cluster's. It returns the commands to run next.
func (s *Server) runFlow(file, useExisting string, p *progress.Printer) ([]string, error) {
	if w := s.o.Workload; w != nil {
		err := w.Create(s.ctx, cluster.CreateOptions{File: file, Environ: w.Environ, Client: w.Client, Home: s.o.Home, Timeout: w.Timeout, Progress: p, CheckHost: w.CheckHost})
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(filepath.Base(file), ".flat.yaml")
		return []string{"slipway cluster get " + name, "slipway cluster kubeconfig get " + name + " --admin"}, nil
	}
	o := s.o.Base
	o.File, o.Home, o.Store, o.UseExistingBootstrap, o.Progress, o.Out = file, s.o.Home, s.o.Store, useExisting, p, io.Discard
	res, err := s.o.Create(s.ctx, o)
	if err != nil || res == nil {
		return nil, err
	}
	return []string{"slipway cluster create [name] -f [file]", "kubectl --context " + res.Context + " get apps -A"}, nil
}

func (s *Server) deploy(w http.ResponseWriter, r *http.Request) {
	// Nothing is written while a run goes on: a resume would read the file.
	s.mu.Lock()
	err := s.busy()
	s.mu.Unlock()
	if err != nil {
		apiError(w, http.StatusConflict, err)
		return
	}
	out := s.saveRequest(w, r)
	if out == nil {
		return
	}
	if !out.ok() {
		writeJSON(w, http.StatusUnprocessableEntity, out)
		return
	}
	if _, err := s.start(out.Path, []byte(out.File), nil); errors.Is(err, errConflict) {
		apiError(w, http.StatusConflict, err)
		return
	} else if err != nil {
		apiError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusAccepted, out)
}

func (s *Server) deployState(w http.ResponseWriter, _ *http.Request) {
	d := s.current()
	if d == nil {
		writeJSON(w, http.StatusOK, status{State: "none", Steps: []step{}})
		return
	}
	_, st, _ := d.snapshot(0)
	writeJSON(w, http.StatusOK, st)
}

// deployLog streams the deploy as server-sent events: every line from the first (event line),
// the status on every change (event status), and end once the run ended and all was sent.
func (s *Server) deployLog(w http.ResponseWriter, r *http.Request) {
	d := s.current()
	if d == nil {
		apiError(w, http.StatusNotFound, errors.New("nothing was deployed yet"))
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		apiError(w, http.StatusInternalServerError, errors.New("the connection cannot stream"))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sent, lastStatus := 0, ""
	for {
		lines, st, changed := d.snapshot(sent)
		for _, l := range lines {
			fmt.Fprintf(w, "event: line\ndata: %s\n\n", l)
		}
		sent += len(lines)
		data, _ := json.Marshal(st)
		if string(data) != lastStatus {
			fmt.Fprintf(w, "event: status\ndata: %s\n\n", data)
			lastStatus = string(data)
		}
		if st.State != stateRunning {
			fmt.Fprint(w, "event: end\ndata: {}\n\n")
			flusher.Flush()
			return
		}
		flusher.Flush()
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		case <-time.After(15 * time.Second):
			fmt.Fprint(w, ": still running\n\n")
		}
	}
}

// failed returns the last run and its status when it failed keeping a bootstrap cluster, or an
// error saying why there is nothing to act on; s.mu is held.
func (s *Server) failed() (*deployment, status, error) {
	d := s.run
	if d == nil {
		return nil, status{}, errors.New("nothing was deployed yet")
	}
	_, st, _ := d.snapshot(0)
	switch {
	case st.State != stateFailed:
		return nil, st, fmt.Errorf("the last deploy is %s, not failed", st.State)
	case st.Failure.Bootstrap == "" || st.Failure.CleanedUp:
		return nil, st, errors.New("the failed run kept no bootstrap cluster: deploy again from the review page")
	}
	return d, st, nil
}

// resume runs the flow again on the bootstrap cluster the failed run kept, as `management-cluster
// create -e --kubeconfig BOOTSTRAP -f FILE`.
func (s *Server) resume(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	d, st, err := s.failed()
	if err == nil {
		err = s.busy()
	}
	s.mu.Unlock()
	if err != nil {
		apiError(w, http.StatusConflict, err)
		return
	}
	f := st.Failure
	if err := os.WriteFile(st.File, d.data, 0o600); err != nil {
		apiError(w, http.StatusInternalServerError, fmt.Errorf("failed to write the run's configuration file again: %w", err))
		return
	}
	if _, err := s.start(st.File, d.data, &failure{Bootstrap: f.Bootstrap, BootstrapName: f.BootstrapName}); err != nil {
		apiError(w, http.StatusConflict, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"resumed": f.BootstrapName})
}

// cleanup deletes the bootstrap cluster the failed run kept, and what it made, as `slipway local
// cluster delete NAME`.
func (s *Server) cleanup(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	d, st, err := s.failed()
	if err == nil {
		err = s.busy()
	}
	if err != nil {
		s.mu.Unlock()
		apiError(w, http.StatusConflict, err)
		return
	}
	s.cleaning = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cleaning = false
		s.mu.Unlock()
	}()
	f := st.Failure
	if err := s.o.Store.Delete(f.BootstrapName, ""); err != nil {
		apiError(w, http.StatusInternalServerError, fmt.Errorf("failed to delete bootstrap cluster %s: %w (`slipway local cluster delete %s` tries again)", f.BootstrapName, err, f.BootstrapName))
		return
	}
	d.mu.Lock()
	d.st.Failure.CleanedUp = true
	fmt.Fprintf(d.tee, "Deleted bootstrap cluster %s\n", f.BootstrapName)
	d.lines = append(d.lines, "Deleted bootstrap cluster "+f.BootstrapName)
	d.notify()
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"deleted": f.BootstrapName})
}
