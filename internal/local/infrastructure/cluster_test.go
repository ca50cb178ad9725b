package infrastructure

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/slipway-dev/slipway/internal/local/cluster"
)

// TestPodCIDRs: a Cluster without pod CIDRs is refused for good, naming the field and TKG's
// default; one with them is not.
func TestPodCIDRs(t *testing.T) {
	owner := func(network clusterv1.ClusterNetwork) *clusterv1.Cluster {
		return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc"}, Spec: clusterv1.ClusterSpec{ClusterNetwork: network}}
	}
	if err := checkPodCIDRs(owner(clusterv1.ClusterNetwork{Pods: clusterv1.NetworkRanges{CIDRBlocks: []string{"100.96.0.0/11"}}})); err != nil {
		t.Errorf("a Cluster with pod CIDRs: %v", err)
	}
	err := checkPodCIDRs(owner(clusterv1.ClusterNetwork{}))
	if err == nil || !errors.Is(err, reconcile.TerminalError(nil)) {
		t.Fatalf("a Cluster without pod CIDRs: %v, want a terminal error", err)
	}
	for _, w := range []string{"spec.clusterNetwork.pods.cidrBlocks", "100.96.0.0/11", "default/wc"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
}

// countingHost is the store's host, counting the specs written.
type countingHost struct {
	cluster.LocalHost
	writes int
}

func (h *countingHost) WriteSpec(ctx context.Context, spec *cluster.Spec) error {
	h.writes++
	return h.LocalHost.WriteSpec(ctx, spec)
}

// TestHostRegistriesReachTheSpec checks that the LocalCluster's hostRegistries are the local
// cluster's from its first spec, so that every node pulls from them, that a change is kept for
// the nodes made after it, and that a pass that changes nothing writes nothing.
func TestHostRegistriesReachTheSpec(t *testing.T) {
	ctx := t.Context()
	store := cluster.Store{Root: t.TempDir()}
	host := &countingHost{LocalHost: cluster.LocalHost{Store: store}}
	r := &ClusterReconciler{Runtime: &Runtime{Host: host, Home: "mgmt"}}
	owner := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc", UID: "wc-uid"}}
	owner.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{"100.96.0.0/11"}
	for _, registries := range [][]string{{"127.0.0.1:5001"}, {"127.0.0.1:5001"}, {"127.0.0.1:5002"}, nil, nil} {
		if _, err := r.ensureSpec(ctx, owner, "wc-uid", registries); err != nil {
			t.Fatal(err)
		}
		spec, err := store.Get("wc")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(spec.HostRegistries, registries) || spec.Owner == nil || spec.Owner.UID != "wc-uid" {
			t.Errorf("after a pass with %q, the spec has registries %q, owner %+v", registries, spec.HostRegistries, spec.Owner)
		}
	}
	if host.writes != 3 {
		t.Errorf("5 passes, 3 of them changes, wrote the spec %d times", host.writes)
	}
}
