package cluster

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// TestScaleChecksTheHost checks that a scale of a local cluster asks the host for the machines it
// adds, and changes nothing when the host refuses; another provider's cluster is not checked.
func TestScaleChecksTheHost(t *testing.T) {
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	local := topologyCluster(1, 1)
	local.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{Kind: "LocalCluster", Name: "wc", APIGroup: "infrastructure.cluster.x-k8s.io"}
	var asked [2]int
	refuse := func(_ *progress.Printer, cp, w int) error {
		asked = [2]int{cp, w}
		return errors.New("this host cannot start 4 more nodes")
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(local).Build()
	err := Scale(t.Context(), c, key, ScaleOptions{ControlPlane: 3, Workers: 4, CheckHost: refuse}, progress.ForWriter(&strings.Builder{}))
	if err == nil || !strings.Contains(err.Error(), `step "host capacity" failed: this host cannot start 4 more nodes`) {
		t.Fatalf("a refused scale should fail naming its step and the host's reason, got %v", err)
	}
	if asked != [2]int{2, 2} {
		t.Errorf("the check was asked for %v, want 2 control-plane machines and 2 workers", asked)
	}
	got := &clusterv1.Cluster{}
	if err := c.Get(t.Context(), key, got); err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Topology.ControlPlane.Replicas != 1 || *got.Spec.Topology.Workers.MachineDeployments[0].Replicas != 1 {
		t.Errorf("the refused scale changed the cluster: %+v", got.Spec.Topology)
	}
	// A scale that adds nothing is not checked: a host over its limits can still shed nodes. A
	// cluster of another provider is not this host's.
	asked = [2]int{-1, -1}
	if err := Scale(t.Context(), c, key, ScaleOptions{ControlPlane: 1, Workers: 2, CheckHost: refuse}, progress.ForWriter(&strings.Builder{})); err != nil || asked != [2]int{-1, -1} {
		t.Errorf("a scale that adds nothing: %v, the check asked for %v", err, asked)
	}
	other := topologyCluster(1)
	c = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(other).Build()
	if err := Scale(t.Context(), c, key, ScaleOptions{Workers: 3, CheckHost: refuse}, progress.ForWriter(&strings.Builder{})); err != nil {
		t.Errorf("a cluster of another provider was checked: %v", err)
	}
}

// TestNodePoolSetChecksTheHost checks that node-pool set asks the host for the workers a new or
// grown pool adds to a local cluster, and changes nothing when the host refuses.
func TestNodePoolSetChecksTheHost(t *testing.T) {
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	local := topologyCluster(1)
	local.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{Kind: "LocalCluster", Name: "wc", APIGroup: "infrastructure.cluster.x-k8s.io"}
	cc := &clusterv1.ClusterClass{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: local.Spec.Topology.ClassRef.Name}}
	cc.Spec.Workers.MachineDeployments = []clusterv1.MachineDeploymentClass{{Class: "tkg-worker"}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(local, cc).Build()
	var asked [2]int
	refuse := func(_ *progress.Printer, cp, w int) error {
		asked = [2]int{cp, w}
		return errors.New("this host cannot start 3 more nodes")
	}
	p := progress.ForWriter(&strings.Builder{})
	// A new pool of 3 replicas adds 3 workers; the refusal leaves the cluster as it was.
	three := int32(3)
	if _, err := SetNodePool(t.Context(), c, key, &NodePool{Name: "np-1", BaseMachineDeployment: "md-0", Replicas: &three}, refuse, p); err == nil ||
		!strings.Contains(err.Error(), "cannot start 3 more nodes") || asked != [2]int{0, 3} {
		t.Fatalf("a new pool of 3: %v, the check asked for %v", err, asked)
	}
	got := &clusterv1.Cluster{}
	if err := c.Get(t.Context(), key, got); err != nil {
		t.Fatal(err)
	}
	if n := len(got.Spec.Topology.Workers.MachineDeployments); n != 1 {
		t.Errorf("the refused node-pool set left %d pools, want 1", n)
	}
	// Growing md-0 from 1 to 3 adds 2; a change that adds no worker asks nothing.
	allow := func(_ *progress.Printer, cp, w int) error { asked = [2]int{cp, w}; return nil }
	if _, err := SetNodePool(t.Context(), c, key, &NodePool{Name: "md-0", Replicas: &three}, allow, p); err != nil || asked != [2]int{0, 2} {
		t.Errorf("md-0 to 3: %v, the check asked for %v", err, asked)
	}
	asked = [2]int{-1, -1}
	if _, err := SetNodePool(t.Context(), c, key, &NodePool{Name: "md-0", AZ: "zone-b"}, allow, p); err != nil || asked != [2]int{-1, -1} {
		t.Errorf("a change of md-0's zone: %v, the check asked for %v", err, asked)
	}
}

// TestHostLimitWatch checks that a wait says, once, which machine a host limit holds and why.
func TestHostLimitWatch(t *testing.T) {
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	held := &infrav1.LocalMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc-md-0-x",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "wc"}}}
	held.Status.Conditions = []metav1.Condition{{Type: infrav1.NodeStartedCondition, Status: metav1.ConditionFalse,
		Reason: infrav1.ReasonHostLimitReached, Message: "fs.inotify.max_user_instances is 128 with 120 in use"}}
	started := &infrav1.LocalMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc-cp-y",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "wc"}}}
	started.Status.Conditions = []metav1.Condition{{Type: infrav1.NodeStartedCondition, Status: metav1.ConditionTrue, Reason: infrav1.ReasonNodeStarted}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(held, started).Build()
	var out strings.Builder
	w := HostLimitWatch{P: progress.ForWriter(&out)}
	want := "machine wc-md-0-x cannot start: fs.inotify.max_user_instances is 128 with 120 in use"
	for range 3 {
		if got := w.Check(t.Context(), c, key); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if strings.Count(out.String(), "Warning: "+want) != 1 {
		t.Errorf("printed:\n%s", out.String())
	}
}
