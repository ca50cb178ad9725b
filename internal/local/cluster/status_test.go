package cluster

import (
	"testing"
)

func TestStateStatus(t *testing.T) {
	spec := &Spec{Name: "boot", LoadBalancerIP: "198.18.1.1", Nodes: []NodeSpec{{Name: "boot-control-plane"}, {Name: "boot-worker"}}}
	for _, tc := range []struct {
		name  string
		state State
		want  string
	}{
		{"all running", State{Spec: spec, NodesRunning: 2, LoadBalancerRunning: true}, "Running"},
		{"nothing runs", State{Spec: spec}, "Stopped"},
		{"a node down", State{Spec: spec, NodesRunning: 1, LoadBalancerRunning: true}, "Degraded (1/2 nodes running)"},
		{"load balancer down", State{Spec: spec, NodesRunning: 2}, "Degraded (load balancer stopped)"},
		// An init process killed alone leaves the node's containerd and kubelet running: not
		// Stopped.
		{"init killed, its processes run", State{Spec: spec, NodesRunning: 1, Orphaned: []string{"boot-worker"}, LoadBalancerRunning: true},
			"Degraded (1/2 nodes running, init process down on boot-worker, its processes still run)"},
		{"every init killed", State{Spec: spec, Orphaned: []string{"boot-control-plane", "boot-worker"}, LoadBalancerRunning: true},
			"Degraded (0/2 nodes running, init process down on boot-control-plane, boot-worker, its processes still run)"},
	} {
		if got := tc.state.Status(); got != tc.want {
			t.Errorf("%s: Status() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
