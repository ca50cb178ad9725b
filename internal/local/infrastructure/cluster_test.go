package infrastructure

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	"github.com/slipway-dev/slipway/internal/local/cluster"
)

// TestNodeRuntime: a Cluster's annotation chooses its nodes; without it, they are of the kind
// the provider's home cluster's are; anything else is refused, naming the values it takes.
func TestNodeRuntime(t *testing.T) {
	host := cluster.LocalHost{Store: cluster.Store{Root: t.TempDir()}}
	for _, home := range []*cluster.Spec{cluster.NewSpec("agent-mc", "v1.35.4", 1, 1, 1), cluster.NewRealSpec("real-mc", "v1.35.4", 2, 1, 1)} {
		if err := host.WriteSpec(t.Context(), home); err != nil {
			t.Fatal(err)
		}
	}
	pods := clusterv1.ClusterNetwork{Pods: clusterv1.NetworkRanges{CIDRBlocks: []string{"100.96.0.0/11"}}}
	owner := func(annotations map[string]string, network clusterv1.ClusterNetwork) *clusterv1.Cluster {
		return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc", Annotations: annotations},
			Spec: clusterv1.ClusterSpec{ClusterNetwork: network}}
	}
	real := map[string]string{infrav1.NodeRuntimeAnnotation: infrav1.NodeRuntimeReal}
	agent := map[string]string{infrav1.NodeRuntimeAnnotation: infrav1.NodeRuntimeAgent}
	for _, tc := range []struct {
		name, home string
		owner      *clusterv1.Cluster
		want       string
	}{
		{"a real management cluster's default", "real-mc", owner(nil, pods), cluster.RuntimeReal},
		{"an agent management cluster's default", "agent-mc", owner(nil, pods), ""},
		{"a provider without a home (the CLI's)", "", owner(nil, pods), ""},
		{"real chosen on an agent management cluster", "agent-mc", owner(real, pods), cluster.RuntimeReal},
		{"agent chosen on a real management cluster", "real-mc", owner(agent, pods), ""},
		{"an empty annotation, as none", "real-mc", owner(map[string]string{infrav1.NodeRuntimeAnnotation: ""}, pods), cluster.RuntimeReal},
	} {
		r := &ClusterReconciler{Runtime: &Runtime{Host: host, Home: tc.home}}
		got, err := r.nodeRuntime(t.Context(), tc.owner)
		if err != nil || got != tc.want {
			t.Errorf("%s: runtime %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name, home string
		owner      *clusterv1.Cluster
		want       []string
	}{
		{"an unknown runtime", "real-mc", owner(map[string]string{infrav1.NodeRuntimeAnnotation: "vm"}, pods), []string{`is "vm"`, infrav1.NodeRuntimeChoices, "remove it"}},
		{"real nodes without pod CIDRs, by default", "real-mc", owner(nil, clusterv1.ClusterNetwork{}), []string{"spec.clusterNetwork.pods.cidrBlocks", "100.96.0.0/11", "node-runtime: agent"}},
		{"real nodes without pod CIDRs, chosen", "agent-mc", owner(real, clusterv1.ClusterNetwork{}), []string{"spec.clusterNetwork.pods.cidrBlocks", "100.96.0.0/11"}},
		{"a home cluster that is gone", "gone", owner(nil, pods), []string{"failed to read local cluster gone"}},
	} {
		r := &ClusterReconciler{Runtime: &Runtime{Host: host, Home: tc.home}}
		_, err := r.nodeRuntime(t.Context(), tc.owner)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.name, err, w)
			}
		}
		// A bad Cluster waits for the user; a home not read is tried again.
		if terminal := errors.Is(err, reconcile.TerminalError(nil)); terminal == (tc.home == "gone") {
			t.Errorf("%s: terminal %v", tc.name, terminal)
		}
	}
}
