package cluster

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// nodePoolClient serves a cluster of one pool md-0 (2 replicas, a label override) of a
// ClusterClass with the worker class tkg-worker and the nodePoolLabels variable only.
func nodePoolClient(t *testing.T) client.Client {
	t.Helper()
	c := topologyCluster(2)
	c.Spec.Topology.ClassRef.Name = "tkg-local-default-v1.0.0"
	c.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalCluster", Name: "wc"}
	if err := setOverride(&c.Spec.Topology.Workers.MachineDeployments[0], "nodePoolLabels", []map[string]string{{"key": "tier", "value": "a"}}); err != nil {
		t.Fatal(err)
	}
	cc := &clusterv1.ClusterClass{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tkg-local-default-v1.0.0"}}
	cc.Spec.Workers.MachineDeployments = []clusterv1.MachineDeploymentClass{{Class: "tkg-worker"}}
	cc.Spec.Variables = []clusterv1.ClusterClassVariable{{Name: "nodePoolLabels"}, {Name: "controlPlaneTaint"}}
	return fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(c, cc).Build()
}

func pools(t *testing.T, c client.Client) map[string]clusterv1.MachineDeploymentTopology {
	t.Helper()
	cl := &clusterv1.Cluster{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "wc"}, cl); err != nil {
		t.Fatal(err)
	}
	out := map[string]clusterv1.MachineDeploymentTopology{}
	for _, md := range cl.Spec.Topology.Workers.MachineDeployments {
		out[md.Name] = md
	}
	return out
}

func override(md clusterv1.MachineDeploymentTopology, name string) string {
	for _, v := range md.Variables.Overrides {
		if v.Name == name {
			return string(v.Value.Raw)
		}
	}
	return ""
}

func TestSetNodePool(t *testing.T) {
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	read := func(t *testing.T, file string) *NodePool {
		t.Helper()
		np, err := ReadNodePool([]byte(file))
		if err != nil {
			t.Fatal(err)
		}
		return np
	}

	t.Run("a new pool copies its base", func(t *testing.T) {
		c := nodePoolClient(t)
		created, err := SetNodePool(t.Context(), c, key, read(t, "name: np-1\nbaseMachineDeployment: md-0\nlabels: {disk: ssd}\naz: zone-b\n"), nil, nil)
		if err != nil || !created {
			t.Fatalf("created %v, %v", created, err)
		}
		np := pools(t, c)["np-1"]
		if np.Class != "tkg-worker" || *np.Replicas != 2 || np.FailureDomain != "zone-b" {
			t.Errorf("np-1: class %s, replicas %d, failure domain %q", np.Class, *np.Replicas, np.FailureDomain)
		}
		var labels []map[string]string
		if err := json.Unmarshal([]byte(override(np, "nodePoolLabels")), &labels); err != nil || len(labels) != 2 || labels[1]["key"] != "disk" || labels[1]["value"] != "ssd" {
			t.Errorf("np-1's nodePoolLabels %s (%v): want the base's tier=a and disk=ssd", override(np, "nodePoolLabels"), err)
		}
		if md0 := pools(t, c)["md-0"]; *md0.Replicas != 2 || override(md0, "nodePoolLabels") != `[{"key":"tier","value":"a"}]` {
			t.Errorf("the base changed: %+v", md0)
		}
	})
	t.Run("a new pool from a worker class", func(t *testing.T) {
		c := nodePoolClient(t)
		if created, err := SetNodePool(t.Context(), c, key, read(t, "name: np-2\nworkerClass: tkg-worker\ntkrResolver: os-name=ubuntu\n"), nil, nil); err != nil || !created {
			t.Fatalf("created %v, %v", created, err)
		}
		np := pools(t, c)["np-2"]
		if *np.Replicas != 1 || np.Metadata.Annotations[runv1alpha3.AnnotationResolveOSImage] != "os-name=ubuntu" {
			t.Errorf("np-2: %+v", np)
		}
	})
	t.Run("an existing pool changes in place", func(t *testing.T) {
		c := nodePoolClient(t)
		if created, err := SetNodePool(t.Context(), c, key, read(t, "name: md-0\nreplicas: 3\nlabels: {tier: b}\n"), nil, nil); err != nil || created {
			t.Fatalf("created %v, %v", created, err)
		}
		md0 := pools(t, c)["md-0"]
		if *md0.Replicas != 3 || override(md0, "nodePoolLabels") != `[{"key":"tier","value":"b"}]` || len(pools(t, c)) != 1 {
			t.Errorf("md-0: replicas %d, labels %s", *md0.Replicas, override(md0, "nodePoolLabels"))
		}
	})
	for _, tc := range []struct{ name, file, want string }{
		{"base of an existing pool", "name: md-0\nbaseMachineDeployment: md-0\n", "baseMachineDeployment: node pool md-0 exists"},
		{"unknown base", "name: np-3\nbaseMachineDeployment: md-9\n", "baseMachineDeployment: cluster wc has no node pool md-9: use one of md-0"},
		{"neither base nor class", "name: np-3\n", "a new node pool needs baseMachineDeployment (one of md-0) or workerClass"},
		{"unknown class", "name: np-3\nworkerClass: gpu\n", `workerClass: ClusterClass tkg-local-default-v1.0.0 has no machine deployment class "gpu": use one of tkg-worker`},
		{"taints the class cannot set", "name: md-0\ntaints: [{key: k, value: v, effect: NoSchedule}]\n", "taints: ClusterClass tkg-local-default-v1.0.0 has no nodePoolTaints variable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := nodePoolClient(t)
			before := pools(t, c)
			if _, err := SetNodePool(t.Context(), c, key, read(t, tc.file), nil, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if after := pools(t, c); len(after) != len(before) || *after["md-0"].Replicas != 2 {
				t.Errorf("a refused set changed the cluster: %v", after)
			}
		})
	}
}

func TestReadNodePool(t *testing.T) {
	for file, want := range map[string]string{
		"name: np-1\nnodeMachineType: m5.large\n": `unknown field "nodeMachineType"`,
		"name: NP_1\n":               "name: Invalid value: \"NP_1\"",
		"replicas: 1\n":              "name: Invalid value: \"\"",
		"name: np-1\nreplicas: -1\n": "replicas: Invalid value: -1: must be 0 or more",
	} {
		if _, err := ReadNodePool([]byte(file)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", file, err, want)
		}
	}
}

func TestDeleteNodePool(t *testing.T) {
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	c := nodePoolClient(t)
	if err := DeleteNodePool(t.Context(), c, key, "md-0"); err == nil || !strings.Contains(err.Error(), "unable to delete last node pool md-0") {
		t.Errorf("the last pool: %v", err)
	}
	if err := DeleteNodePool(t.Context(), c, key, "np-9"); err == nil || !strings.Contains(err.Error(), "could not find node pool np-9 to delete: cluster wc has md-0") {
		t.Errorf("an unknown pool: %v", err)
	}
	if _, err := SetNodePool(t.Context(), c, key, &NodePool{Name: "np-1", BaseMachineDeployment: "md-0"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := DeleteNodePool(t.Context(), c, key, "np-1"); err != nil {
		t.Fatal(err)
	}
	if p := pools(t, c); len(p) != 1 || p["md-0"].Name != "md-0" {
		t.Errorf("after the delete: %v", p)
	}
}

func TestNodePoolsAndAvailableUpgrades(t *testing.T) {
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	cl := topologyCluster(2, 1)
	cl.Labels[runv1alpha3.LabelTKR], cl.Spec.Topology.Version = "v1.34.3---vmware.1-tkg.1", "v1.34.3+vmware.1"
	cl.Status.Conditions = []metav1.Condition{{Type: runv1alpha3.ConditionUpdatesAvailable, Status: metav1.ConditionTrue, Message: "[v1.35.4+vmware.1-tkg.1]"}}
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc-md-0-x",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "wc", clusterv1.ClusterTopologyMachineDeploymentNameLabel: "md-0"}}}
	md.Spec.Replicas = ptr.To[int32](2)
	md.Status.Phase = "Running"
	md.Status.Replicas, md.Status.ReadyReplicas, md.Status.UpToDateReplicas, md.Status.AvailableReplicas = ptr.To[int32](2), ptr.To[int32](2), ptr.To[int32](1), ptr.To[int32](1)
	tkr := &runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: "v1.35.4---vmware.1-tkg.1"}}
	tkr.Spec.Version = "v1.35.4+vmware.1-tkg.1"
	old := &runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: "v1.34.3---vmware.1-tkg.1"}}
	old.Spec.Version = "v1.34.3+vmware.1-tkg.1"
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(cl, md, tkr, old).Build()

	rows, err := NodePools(t.Context(), c, key)
	if err != nil {
		t.Fatal(err)
	}
	want := []PoolStatus{{Name: "md-0", Namespace: "default", Phase: "Running", Replicas: 2, Ready: 2, Updated: 1, Unavailable: 1},
		{Name: "md-1", Namespace: "default", Phase: "Pending"}}
	if len(rows) != 2 || rows[0] != want[0] || rows[1] != want[1] {
		t.Errorf("node pools %+v, want %+v", rows, want)
	}

	releases, err := AvailableUpgrades(t.Context(), c, key)
	if err != nil || len(releases) != 1 || releases[0].Name != "v1.35.4---vmware.1-tkg.1" {
		t.Errorf("available upgrades %v, %v", releases, err)
	}
	cl.Status.Conditions[0].Status = metav1.ConditionFalse
	c = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(cl).Build()
	if _, err := AvailableUpgrades(t.Context(), c, key); !IsNoUpgrades(err) || err.Error() != "no available upgrades for cluster 'wc', namespace 'default'" {
		t.Errorf("no upgrades: %v", err)
	}
}

// A Cluster written by another client between the read and the write of a node pool change
// (here an annotation; its controllers write its status all the time) is read again and changed
// again: the pool is set and the other write kept, and the host is checked once. Without the
// retry, the CLI failed with the API server's conflict (seen in the e2e suite on real nodes).
func TestNodePoolChangesRetryOnConflict(t *testing.T) {
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	writes := 0
	c := interceptor.NewClient(nodePoolClient(t).(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			if writes++; writes%2 == 1 {
				// A controller's write lands before each change's first try.
				cl := &clusterv1.Cluster{}
				if err := c.Get(ctx, key, cl); err != nil {
					return err
				}
				cl.Annotations = map[string]string{"written": cl.ResourceVersion}
				if err := c.Update(ctx, cl); err != nil {
					return err
				}
			}
			return c.Patch(ctx, o, p, opts...)
		},
	})
	checks := 0
	check := func(*progress.Printer, int, int) error { checks++; return nil }
	if created, err := SetNodePool(t.Context(), c, key, &NodePool{Name: "np-1", BaseMachineDeployment: "md-0"}, check, nil); err != nil || !created {
		t.Fatalf("set after a conflict: created %v, %v", created, err)
	}
	if checks != 1 {
		t.Errorf("the host was checked %d times for one change, want once", checks)
	}
	if err := DeleteNodePool(t.Context(), c, key, "md-0"); err != nil {
		t.Fatalf("delete after a conflict: %v", err)
	}
	cl := &clusterv1.Cluster{}
	if err := c.Get(t.Context(), key, cl); err != nil {
		t.Fatal(err)
	}
	if p := pools(t, c); len(p) != 1 || p["np-1"].Name != "np-1" || cl.Annotations["written"] == "" {
		t.Errorf("pools %v, annotations %v: want np-1 alone and the other write kept", p, cl.Annotations)
	}
	if writes != 4 {
		t.Errorf("%d writes, want 4: a conflict and a retry for each change", writes)
	}
}
