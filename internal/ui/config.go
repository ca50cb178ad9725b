package ui

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/config"
)

// configRequest is what the wizard sends: the variables of the flat file, by TKG's names.
type configRequest struct {
	Variables map[string]string `json:"variables"`
}

// checked is the configuration package's verdict on a wizard's variables.
type checked struct {
	// Errors are the rules broken, by the variable each names; General those naming none.
	Errors  map[string][]string `json:"errors"`
	General []string            `json:"general,omitempty"`
	// Defaults are the defaults applied, as the CLI prints them; Notes what is set and unused.
	Defaults []string `json:"defaults,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// Name is the cluster's name, defaulted when none was given.
	Name string `json:"name,omitempty"`

	vars *config.Variables
}

// ok says whether nothing blocks a deploy.
func (c *checked) ok() bool { return len(c.Errors) == 0 && len(c.General) == 0 }

// check completes the variables as the management-cluster create flow does, with the same
// rules and messages, and files every error under the variable it names.
func (s *Server) check(vars map[string]string) *checked {
	v := config.NewVariables()
	for name, value := range vars {
		if value = strings.TrimSpace(value); value != "" {
			v.Set(name, value)
		}
	}
	out := &checked{Errors: map[string][]string{}, vars: v}
	for _, n := range v.Unknown() {
		out.General = append(out.General, config.NotKnown(n)+": check its spelling, or remove it")
	}
	role := config.Management
	if s.o.Workload != nil {
		role = config.Workload
	}
	cfg, err := config.Complete(v, role, config.Defaults{KubernetesVersion: assets.DefaultKubernetesVersion(), Now: s.o.Now()},
		func(format string, args ...any) { out.Defaults = append(out.Defaults, fmt.Sprintf(format, args...)) })
	if err != nil {
		for _, e := range leaves(err) {
			if name := variableOf(e.Error()); name != "" {
				out.Errors[name] = append(out.Errors[name], e.Error())
			} else {
				out.General = append(out.General, e.Error())
			}
		}
		return out
	}
	out.Notes, out.Name = cfg.Notes, cfg.Name
	return out
}

// leaves returns the errors errors.Join put together, or err alone.
func leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}

// variableNames matches the variables' names as words, the longest first
// (WORKER_MACHINE_COUNT_0 before WORKER_MACHINE_COUNT); it is built on first use, not when any
// command of the binary starts.
var variableNames = sync.OnceValue(func() *regexp.Regexp {
	names := config.Known()
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for i, n := range names {
		names[i] = regexp.QuoteMeta(n)
	}
	return regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
})

// variableOf is the first variable a message names.
func variableOf(msg string) string { return variableNames().FindString(msg) }

func (s *Server) options(w http.ResponseWriter, _ *http.Request) {
	mode := "management"
	if s.o.Workload != nil {
		mode = "workload"
	}
	sizes, controlPlane, workers := config.NodeSizes()
	writeJSON(w, http.StatusOK, map[string]any{
		"mode":              mode,
		"sizes":             sizes,
		"defaultMachines":   map[string]config.Machine{"CONTROLPLANE_SIZE": controlPlane, "WORKER_SIZE": workers},
		"providers":         []string{"local", "vsphere"},
		"plans":             []string{"dev", "prod"},
		"kubernetesVersion": assets.DefaultKubernetesVersion(),
	})
}

func (s *Server) validate(w http.ResponseWriter, r *http.Request) {
	var req configRequest
	if err := readJSON(r, &req); err != nil {
		apiError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, s.check(req.Variables))
}

// reviewed is the review page: the flat file as it is saved, and the command that runs it.
type reviewed struct {
	checked
	File    string `json:"file,omitempty"`
	Path    string `json:"path,omitempty"`
	Command string `json:"command,omitempty"`
}

// save checks the variables and, when they pass, saves them as the flat file the deploy runs,
// under clusterconfigs/ as TKG's installer does, with the defaults applied (a default name
// included, so that the command names the same cluster), and the command that runs it.
func (s *Server) save(vars map[string]string) (*reviewed, error) {
	c := s.check(vars)
	out := &reviewed{checked: *c}
	if !c.ok() {
		return out, nil
	}
	data, err := c.vars.Marshal()
	if err != nil {
		return nil, err
	}
	out.File = string(data)
	// A workload cluster's flow saves the ClusterClass Cluster it converts the file to as
	// NAME.yaml: the flat file goes beside it.
	out.Path, out.Command = filepath.Join(s.o.Home, "clusterconfigs", c.Name+".yaml"), "slipway management-cluster create -f "
	if s.o.Workload != nil {
		out.Path, out.Command = filepath.Join(s.o.Home, "clusterconfigs", c.Name+".flat.yaml"), "slipway cluster create -f "
	}
	if err := os.MkdirAll(filepath.Dir(out.Path), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(out.Path, data, 0o600); err != nil {
		return nil, fmt.Errorf("failed to save the configuration file: %w", err)
	}
	out.Command += out.Path
	return out, nil
}

// saveRequest reads the wizard's variables and saves them (save); it answers the request itself
// and returns nil when the request was malformed or the file could not be written.
func (s *Server) saveRequest(w http.ResponseWriter, r *http.Request) *reviewed {
	var req configRequest
	if err := readJSON(r, &req); err != nil {
		apiError(w, http.StatusBadRequest, err)
		return nil
	}
	out, err := s.save(req.Variables)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err)
		return nil
	}
	return out
}

func (s *Server) review(w http.ResponseWriter, r *http.Request) {
	out := s.saveRequest(w, r)
	if out == nil {
		return
	}
	status := http.StatusOK
	if !out.ok() {
		status = http.StatusUnprocessableEntity
	}
	writeJSON(w, status, out)
}

// importFile reads a flat configuration file the user exported before (or wrote), as the CLI's
// -f reads it, into the wizard's variables.
func (s *Server) importFile(w http.ResponseWriter, r *http.Request) {
	var req struct {
		File string `json:"file"`
	}
	if err := readJSON(r, &req); err != nil {
		apiError(w, http.StatusBadRequest, err)
		return
	}
	v, err := config.Parse([]byte(req.File))
	if err != nil {
		apiError(w, http.StatusUnprocessableEntity, fmt.Errorf("the file cannot be imported: %w", err))
		return
	}
	values := v.Values()
	if unknown := v.Unknown(); len(unknown) > 0 {
		slices.Sort(unknown)
		writeJSON(w, http.StatusOK, map[string]any{"variables": values, "general": []string{
			fmt.Sprintf("%s: not configuration variables slipway knows; they are kept in the file and ignored", strings.Join(unknown, ", "))}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"variables": values})
}

// errConflict is a deploy asked for while one runs.
var errConflict = errors.New("a cluster is being deployed: wait for it to end (the deploy page follows it)")
