package cluster

import (
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/internal/local/proc"
)

// State is what `list` says of a cluster.
type State struct {
	Spec *Spec
	// NodesRunning counts the nodes whose init process runs.
	NodesRunning int
	// Orphaned names the nodes whose init process does not run while processes of theirs still
	// do: an init killed alone leaves its containerd, kubelet and containers running.
	Orphaned []string
	// LoadBalancerRunning is true when the cluster needs no load balancer or it runs.
	LoadBalancerRunning bool
}

// Status is Running, Stopped or Degraded with what is down.
func (s State) Status() string {
	total := len(s.Spec.Nodes)
	switch {
	case s.NodesRunning == total && s.LoadBalancerRunning:
		return "Running"
	case s.NodesRunning == 0 && len(s.Orphaned) == 0:
		return "Stopped"
	default:
		var down []string
		if s.NodesRunning < total {
			down = append(down, fmt.Sprintf("%d/%d nodes running", s.NodesRunning, total))
		}
		if len(s.Orphaned) > 0 {
			down = append(down, "init process down on "+strings.Join(s.Orphaned, ", ")+", its processes still run")
		}
		if !s.LoadBalancerRunning {
			down = append(down, "load balancer stopped")
		}
		return "Degraded (" + strings.Join(down, ", ") + ")"
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
		switch {
		case nodeRunning(dirs, n.Name):
			st.NodesRunning++
		case len(proc.Using(dirs.Node(n.Name))) > 0:
			st.Orphaned = append(st.Orphaned, n.Name)
		}
	}
	return st
}
