package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/slipway-dev/slipway/internal/local/hostlimits"
	"github.com/slipway-dev/slipway/internal/local/proc"
)

// State is what `list` says of a cluster.
type State struct {
	Spec *Spec
	// NodesRunning counts the nodes whose agent runs.
	NodesRunning int
	// Orphaned names the nodes whose agent does not run while processes of theirs still do: an
	// agent killed with SIGKILL leaves its API server, etcd and pods running.
	Orphaned []string
	// LoadBalancerRunning is true when the cluster needs no load balancer or it runs.
	LoadBalancerRunning bool
	// HostLimits are the host limits a process of a node met in the last hostLimitRecent.
	HostLimits []string
}

// hostLimitRecent is how long a host limit a process met is shown.
const hostLimitRecent = 10 * time.Minute

// hostLimitRecord is what a node's agent records when one of its processes exits on a host
// limit: `list` shows it while it is recent.
type hostLimitRecord struct {
	Process string `json:"process"`
	Limits  string `json:"limits"`
	Line    string `json:"line"`
}

// RecordHostLimit records, in the node's directory, that a process of it met a host limit.
func RecordHostLimit(dirs Dirs, node, process string, f hostlimits.Finding) error {
	data, err := json.Marshal(hostLimitRecord{Process: process, Limits: f.Limits, Line: f.Line})
	if err != nil {
		return err
	}
	return os.WriteFile(dirs.NodeHostLimit(node), data, 0o600)
}

// recentHostLimit reads a node's record of a host limit, when it is recent.
func recentHostLimit(dirs Dirs, node string) (string, bool) {
	path := dirs.NodeHostLimit(node)
	info, err := os.Stat(path)
	if err != nil || time.Since(info.ModTime()) > hostLimitRecent {
		return "", false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	var r hostLimitRecord
	if json.Unmarshal(data, &r) != nil {
		return "", false
	}
	return fmt.Sprintf("%s on %s met a host limit (%s) %s ago", r.Process, node, r.Limits, time.Since(info.ModTime()).Round(time.Second)), true
}

// Status is Running, Stopped or Degraded with what is down.
func (s State) Status() string {
	total := len(s.Spec.Nodes)
	switch {
	case s.NodesRunning == total && s.LoadBalancerRunning && len(s.HostLimits) == 0:
		return "Running"
	case s.NodesRunning == 0 && len(s.Orphaned) == 0:
		return "Stopped"
	default:
		var down []string
		if s.NodesRunning < total {
			down = append(down, fmt.Sprintf("%d/%d nodes running", s.NodesRunning, total))
		}
		if len(s.Orphaned) > 0 {
			down = append(down, "agent down on "+strings.Join(s.Orphaned, ", ")+", its processes still run")
		}
		if !s.LoadBalancerRunning {
			down = append(down, "load balancer stopped")
		}
		return "Degraded (" + strings.Join(append(down, s.HostLimits...), ", ") + ")"
	}
}

// Inspect reports which of a cluster's processes run.
func (s Store) Inspect(spec *Spec) State {
	st := State{Spec: spec}
	dirs, err := s.Dirs(spec.Name)
	if err != nil {
		return st
	}
	st.LoadBalancerRunning = spec.LoadBalancerIP == "" || LoadBalancerRunning(dirs)
	for _, n := range spec.Nodes {
		if msg, ok := recentHostLimit(dirs, n.Name); ok {
			st.HostLimits = append(st.HostLimits, msg)
		}
		switch {
		case nodeRunning(dirs, spec, n.Name):
			st.NodesRunning++
		case len(proc.Using(dirs.Node(n.Name))) > 0:
			st.Orphaned = append(st.Orphaned, n.Name)
		}
	}
	return st
}
