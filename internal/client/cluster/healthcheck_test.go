package cluster

import (
	"maps"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/slipway-dev/slipway/internal/scheme"
)

func TestParseUnhealthyConditions(t *testing.T) {
	got, err := ParseUnhealthyConditions("Ready:False:5m, MemoryPressure:True:90s")
	if err != nil || len(got) != 2 || got[0].Type != "Ready" || got[0].Status != "False" || *got[0].TimeoutSeconds != 300 ||
		got[1].Type != "MemoryPressure" || *got[1].TimeoutSeconds != 90 {
		t.Fatalf("%+v, %v", got, err)
	}
	for value, want := range map[string]string{
		"Ready:False":         "NodeConditionType:ConditionStatus:Timeout",
		"Sleepy:False:5m":     "NodeConditionType Sleepy is not supported",
		"Ready:Maybe:5m":      "ConditionStatus Maybe is not supported",
		"Ready:False:soon":    `"soon" is not a duration`,
		"Ready:False:1500ms":  `"1500ms" is not a duration of whole seconds`,
		"Ready:False:5m,oops": `"oops"`,
	} {
		if _, err := ParseUnhealthyConditions(value); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--unhealthy-conditions") {
			t.Errorf("%q: want an error naming the flag and saying %q, got %v", value, want, err)
		}
	}
	if _, err := ParseNodeStartupTimeout("10s"); err == nil || !strings.Contains(err.Error(), "under 30s") {
		t.Errorf("a 10s startup timeout: %v", err)
	}
	if d, err := ParseNodeStartupTimeout("0"); err != nil || d != 0 {
		t.Errorf("0: %v %v", d, err)
	}
}

// healthCheckClient serves cluster wc with node pools md-0 (its check off) and md-1 (on, one
// condition), and the MachineHealthChecks Cluster API made of md-1 and the control plane.
func healthCheckClient(t *testing.T) client.Client {
	t.Helper()
	c := topologyCluster(1, 1)
	c.Spec.Topology.Workers.MachineDeployments[0].HealthCheck.Enabled = ptr.To(false)
	c.Spec.Topology.Workers.MachineDeployments[1].HealthCheck = clusterv1.MachineDeploymentTopologyHealthCheck{
		Enabled: ptr.To(true),
		Checks: clusterv1.MachineDeploymentTopologyHealthCheckChecks{NodeStartupTimeoutSeconds: ptr.To[int32](600),
			UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{{Type: "Ready", Status: "Unknown", TimeoutSeconds: ptr.To[int32](60)}}},
	}
	mhc := func(name string, labels map[string]string) *clusterv1.MachineHealthCheck {
		m := &clusterv1.MachineHealthCheck{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
		m.Spec.ClusterName = "wc"
		m.Spec.Selector.MatchLabels = labels
		return m
	}
	other := mhc("other-md-0-x", map[string]string{clusterv1.ClusterTopologyMachineDeploymentNameLabel: "md-0"})
	other.Spec.ClusterName = "other"
	return fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(c,
		mhc("wc-md-1-abcde", map[string]string{clusterv1.ClusterTopologyOwnedLabel: "", clusterv1.ClusterTopologyMachineDeploymentNameLabel: "md-1"}),
		mhc("wc-fghij", map[string]string{clusterv1.ClusterTopologyOwnedLabel: "", clusterv1.MachineControlPlaneLabel: ""}),
		other).Build()
}

func TestMachineHealthChecks(t *testing.T) {
	c := healthCheckClient(t)
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	nodes, err := MachineHealthChecks(t.Context(), c, key, Nodes, "")
	if err != nil || len(nodes) != 1 || nodes[0].Name != "wc-md-1-abcde" {
		t.Errorf("node checks: %+v, %v", nodes, err)
	}
	cp, err := MachineHealthChecks(t.Context(), c, key, ControlPlane, "")
	if err != nil || len(cp) != 1 || cp[0].Name != "wc-fghij" {
		t.Errorf("control-plane checks: %+v, %v", cp, err)
	}
	if none, err := MachineHealthChecks(t.Context(), c, key, Nodes, "wc-fghij"); err != nil || len(none) != 0 {
		t.Errorf("the control plane's check by name among the nodes': %+v, %v", none, err)
	}
}

func TestSetMachineHealthCheck(t *testing.T) {
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	topology := func(t *testing.T, c client.Client) clusterv1.Topology {
		t.Helper()
		cl := &clusterv1.Cluster{}
		if err := c.Get(t.Context(), key, cl); err != nil {
			t.Fatal(err)
		}
		return cl.Spec.Topology
	}
	timeouts := func(conditions []clusterv1.UnhealthyNodeCondition) map[string]int32 {
		out := map[string]int32{}
		for _, c := range conditions {
			out[string(c.Type)+":"+string(c.Status)] = *c.TimeoutSeconds
		}
		return out
	}

	// Every node pool: md-0's check, off, starts from TKG's defaults; md-1's keeps its own and
	// gets the change; the startup timeout is set on both.
	c := healthCheckClient(t)
	conditions, _ := ParseUnhealthyConditions("Ready:Unknown:2m,DiskPressure:True:10m")
	startup := 45 * time.Minute
	pools, err := SetMachineHealthCheck(t.Context(), c, key, Nodes, "", HealthCheckChange{NodeStartupTimeout: &startup, UnhealthyConditions: conditions})
	if err != nil || strings.Join(pools, ",") != "md-0,md-1" {
		t.Fatalf("set on every pool: %v, %v", pools, err)
	}
	mds := topology(t, c).Workers.MachineDeployments
	if hc := mds[0].HealthCheck; !*hc.Enabled || *hc.Checks.NodeStartupTimeoutSeconds != 2700 ||
		!maps.Equal(timeouts(hc.Checks.UnhealthyNodeConditions), map[string]int32{"Ready:False": 300, "Ready:Unknown": 120, "DiskPressure:True": 600}) {
		t.Errorf("md-0's check: %+v", hc)
	}
	if hc := mds[1].HealthCheck; !*hc.Enabled || *hc.Checks.NodeStartupTimeoutSeconds != 2700 ||
		!maps.Equal(timeouts(hc.Checks.UnhealthyNodeConditions), map[string]int32{"Ready:Unknown": 120, "DiskPressure:True": 600}) {
		t.Errorf("md-1's check: %+v", hc)
	}

	// One pool, by its MachineHealthCheck's name; a name of no node pool check is refused,
	// naming those that are.
	c = healthCheckClient(t)
	if pools, err := DeleteMachineHealthCheck(t.Context(), c, key, Nodes, "wc-md-1-abcde"); err != nil || strings.Join(pools, ",") != "md-1" {
		t.Fatalf("delete md-1's: %v, %v", pools, err)
	}
	if hc := topology(t, c).Workers.MachineDeployments[1].HealthCheck; *hc.Enabled {
		t.Errorf("md-1's check after delete: %+v", hc)
	}
	if _, err := SetMachineHealthCheck(t.Context(), c, key, Nodes, "wc-fghij", HealthCheckChange{}); err == nil || !strings.Contains(err.Error(), "use one of wc-md-1-abcde") {
		t.Errorf("the control plane's check as a node pool's: %v", err)
	}

	// The control plane's.
	if _, err := SetMachineHealthCheck(t.Context(), c, key, ControlPlane, "", HealthCheckChange{}); err != nil {
		t.Fatal(err)
	}
	if hc := topology(t, c).ControlPlane.HealthCheck; !*hc.Enabled || *hc.Checks.NodeStartupTimeoutSeconds != 1200 || len(hc.Checks.UnhealthyNodeConditions) != 2 {
		t.Errorf("the control plane's check: %+v", hc)
	}
	if _, err := DeleteMachineHealthCheck(t.Context(), c, key, ControlPlane, ""); err != nil || *topology(t, c).ControlPlane.HealthCheck.Enabled {
		t.Errorf("the control plane's check after delete: %v", err)
	}
}
