package cluster

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HealthCheckTarget is what a machine health check of a cluster watches: its nodes (the
// machines of its node pools) or its control plane.
type HealthCheckTarget string

// Targets of `cluster machinehealthcheck node|control-plane`.
const (
	Nodes        HealthCheckTarget = "node"
	ControlPlane HealthCheckTarget = "control-plane"
)

// TKG's defaults for a machine health check that `set` turns on.
const (
	defaultUnhealthyTimeout   = 5 * time.Minute
	defaultNodeStartupTimeout = 20 * time.Minute
)

// unhealthyTypes and unhealthyStatuses are the node conditions TKG lets a check watch.
var (
	unhealthyTypes    = []string{"Ready", "MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"}
	unhealthyStatuses = []string{"True", "False", "Unknown"}
)

// MachineHealthCheck is a MachineHealthCheck as TKG's `get` prints it.
type MachineHealthCheck struct {
	Name      string                             `json:"name"`
	Namespace string                             `json:"namespace"`
	Spec      clusterv1.MachineHealthCheckSpec   `json:"spec"`
	Status    clusterv1.MachineHealthCheckStatus `json:"status"`
}

// HealthCheckChange is what `set` changes of a cluster's health checks: each condition replaces
// the timeout of the check's condition of the same type and status, or is added.
type HealthCheckChange struct {
	NodeStartupTimeout  *time.Duration
	UnhealthyConditions []clusterv1.UnhealthyNodeCondition
}

// ParseUnhealthyConditions reads TKG's --unhealthy-conditions: TYPE:STATUS:TIMEOUT, separated
// by commas, as Ready:False:5m,Ready:Unknown:5m.
func ParseUnhealthyConditions(value string) ([]clusterv1.UnhealthyNodeCondition, error) {
	var out []clusterv1.UnhealthyNodeCondition
	for _, item := range strings.Split(value, ",") {
		parts := strings.Split(strings.TrimSpace(item), ":")
		if len(parts) != 3 {
			return nil, fmt.Errorf("--unhealthy-conditions %q: write each condition NodeConditionType:ConditionStatus:Timeout, as Ready:False:5m", item)
		}
		if !slices.Contains(unhealthyTypes, parts[0]) {
			return nil, fmt.Errorf("--unhealthy-conditions %q: NodeConditionType %s is not supported: use one of %s", item, parts[0], strings.Join(unhealthyTypes, ", "))
		}
		if !slices.Contains(unhealthyStatuses, parts[1]) {
			return nil, fmt.Errorf("--unhealthy-conditions %q: ConditionStatus %s is not supported: use one of %s", item, parts[1], strings.Join(unhealthyStatuses, ", "))
		}
		d, err := wholeSeconds(parts[2])
		if err != nil {
			return nil, fmt.Errorf("--unhealthy-conditions %q: the timeout %w", item, err)
		}
		out = append(out, clusterv1.UnhealthyNodeCondition{Type: corev1.NodeConditionType(parts[0]), Status: corev1.ConditionStatus(parts[1]), TimeoutSeconds: ptr.To(int32(d / time.Second))})
	}
	return out, nil
}

// ParseNodeStartupTimeout reads --node-startup-timeout: 0 for none, else at least 30s, as
// Cluster API takes it.
func ParseNodeStartupTimeout(value string) (time.Duration, error) {
	d, err := wholeSeconds(value)
	if err == nil && d != 0 && d < 30*time.Second {
		err = fmt.Errorf("%q is under 30s, the least Cluster API takes (0 is no limit)", value)
	}
	if err != nil {
		return 0, fmt.Errorf("--node-startup-timeout: %w", err)
	}
	return d, nil
}

func wholeSeconds(value string) (time.Duration, error) {
	d, err := time.ParseDuration(value)
	if err != nil || d < 0 || d%time.Second != 0 || d > math.MaxInt32*time.Second {
		return 0, fmt.Errorf("%q is not a duration of whole seconds, as 5m, 90s or 1h30m", value)
	}
	return d, nil
}

// MachineHealthChecks returns the MachineHealthChecks of the cluster's nodes or control plane,
// of the one name when it is not empty, sorted by name.
func MachineHealthChecks(ctx context.Context, c client.Client, key client.ObjectKey, target HealthCheckTarget, name string) ([]MachineHealthCheck, error) {
	if _, err := topologyOf(ctx, c, key); err != nil {
		return nil, err
	}
	list := &clusterv1.MachineHealthCheckList{}
	if err := c.List(ctx, list, client.InNamespace(key.Namespace)); err != nil {
		return nil, err
	}
	var out []MachineHealthCheck
	for _, m := range list.Items {
		if m.Spec.ClusterName != key.Name || (name != "" && m.Name != name) || targetOf(&m) != target {
			continue
		}
		out = append(out, MachineHealthCheck{Name: m.Name, Namespace: m.Namespace, Spec: m.Spec, Status: m.Status})
	}
	slices.SortFunc(out, func(a, b MachineHealthCheck) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// targetOf is what a MachineHealthCheck watches, by its selector.
func targetOf(m *clusterv1.MachineHealthCheck) HealthCheckTarget {
	if _, ok := m.Spec.Selector.MatchLabels[clusterv1.MachineControlPlaneLabel]; ok {
		return ControlPlane
	}
	return Nodes
}

// SetMachineHealthCheck turns on and changes the machine health checks of a ClusterClass
// cluster's control plane, or of its node pools (all, or the one whose MachineHealthCheck is
// named mhcName), in the Cluster's topology, from which Cluster API makes them. A check that was
// off starts from TKG's defaults (Ready False or Unknown for 5m, nodes started within 20m). It
// returns the node pools changed (none for the control plane).
func SetMachineHealthCheck(ctx context.Context, c client.Client, key client.ObjectKey, target HealthCheckTarget, mhcName string, change HealthCheckChange) ([]string, error) {
	return changeHealthChecks(ctx, c, key, target, mhcName, func(checks *healthCheckFields) {
		if checks.enabled == nil || !*checks.enabled || len(checks.conditions) == 0 {
			checks.conditions = []clusterv1.UnhealthyNodeCondition{
				{Type: "Ready", Status: "False", TimeoutSeconds: ptr.To(int32(defaultUnhealthyTimeout / time.Second))},
				{Type: "Ready", Status: "Unknown", TimeoutSeconds: ptr.To(int32(defaultUnhealthyTimeout / time.Second))},
			}
			if checks.startup == nil {
				checks.startup = ptr.To(int32(defaultNodeStartupTimeout / time.Second))
			}
		}
		checks.enabled = ptr.To(true)
		if change.NodeStartupTimeout != nil {
			checks.startup = ptr.To(int32(*change.NodeStartupTimeout / time.Second))
		}
		for _, want := range change.UnhealthyConditions {
			i := slices.IndexFunc(checks.conditions, func(have clusterv1.UnhealthyNodeCondition) bool {
				return have.Type == want.Type && have.Status == want.Status
			})
			if i < 0 {
				checks.conditions = append(checks.conditions, want)
			} else {
				checks.conditions[i].TimeoutSeconds = want.TimeoutSeconds
			}
		}
	})
}

// DeleteMachineHealthCheck turns off the machine health check of the control plane, or of the
// node pools (all, or the one whose MachineHealthCheck is mhcName), in the Cluster's topology:
// Cluster API deletes the MachineHealthChecks. It returns the node pools changed.
func DeleteMachineHealthCheck(ctx context.Context, c client.Client, key client.ObjectKey, target HealthCheckTarget, mhcName string) ([]string, error) {
	return changeHealthChecks(ctx, c, key, target, mhcName, func(checks *healthCheckFields) { checks.enabled = ptr.To(false) })
}

// healthCheckFields are the fields the control plane's and a machine deployment's topology
// health checks share.
type healthCheckFields struct {
	enabled    *bool
	startup    *int32
	conditions []clusterv1.UnhealthyNodeCondition
}

// changeHealthChecks applies change to the topology health checks of target and patches the
// Cluster.
func changeHealthChecks(ctx context.Context, c client.Client, key client.ObjectKey, target HealthCheckTarget, mhcName string, change func(*healthCheckFields)) ([]string, error) {
	cl, err := topologyOf(ctx, c, key)
	if err != nil {
		return nil, err
	}
	before := cl.DeepCopy()
	var pools []string
	if target == ControlPlane {
		if mhcName != "" {
			if err := checkMHCName(ctx, c, key, target, mhcName); err != nil {
				return nil, err
			}
		}
		hc := &cl.Spec.Topology.ControlPlane.HealthCheck
		f := healthCheckFields{hc.Enabled, hc.Checks.NodeStartupTimeoutSeconds, hc.Checks.UnhealthyNodeConditions}
		change(&f)
		hc.Enabled, hc.Checks.NodeStartupTimeoutSeconds, hc.Checks.UnhealthyNodeConditions = f.enabled, f.startup, f.conditions
	} else {
		pool := ""
		if mhcName != "" {
			if pool, err = poolOfMHC(ctx, c, key, mhcName); err != nil {
				return nil, err
			}
		}
		mds := cl.Spec.Topology.Workers.MachineDeployments
		for i := range mds {
			if pool != "" && mds[i].Name != pool {
				continue
			}
			hc := &mds[i].HealthCheck
			f := healthCheckFields{hc.Enabled, hc.Checks.NodeStartupTimeoutSeconds, hc.Checks.UnhealthyNodeConditions}
			change(&f)
			hc.Enabled, hc.Checks.NodeStartupTimeoutSeconds, hc.Checks.UnhealthyNodeConditions = f.enabled, f.startup, f.conditions
			pools = append(pools, mds[i].Name)
		}
		if len(pools) == 0 {
			return nil, fmt.Errorf("--mhc-name %s: no node pool of cluster %s has it", mhcName, key.Name)
		}
	}
	if err := c.Patch(ctx, cl, client.MergeFrom(before)); err != nil {
		return nil, fmt.Errorf("failed to change the machine health checks of cluster %s: %w", key, err)
	}
	return pools, nil
}

// poolOfMHC is the node pool whose MachineHealthCheck is name.
func poolOfMHC(ctx context.Context, c client.Client, key client.ObjectKey, name string) (string, error) {
	if err := checkMHCName(ctx, c, key, Nodes, name); err != nil {
		return "", err
	}
	m := &clusterv1.MachineHealthCheck{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: name}, m); err != nil {
		return "", err
	}
	pool := m.Spec.Selector.MatchLabels[clusterv1.ClusterTopologyMachineDeploymentNameLabel]
	if pool == "" {
		return "", fmt.Errorf("--mhc-name %s: it is not the MachineHealthCheck of a node pool of cluster %s's topology", name, key.Name)
	}
	return pool, nil
}

// checkMHCName refuses a name that is not one of the cluster's MachineHealthChecks of target,
// naming those that are.
func checkMHCName(ctx context.Context, c client.Client, key client.ObjectKey, target HealthCheckTarget, name string) error {
	all, err := MachineHealthChecks(ctx, c, key, target, "")
	if err != nil {
		return err
	}
	var names []string
	for _, m := range all {
		if m.Name == name {
			return nil
		}
		names = append(names, m.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("--mhc-name %s: cluster %s has no %s MachineHealthCheck: leave --mhc-name out", name, key.Name, target)
	}
	return fmt.Errorf("--mhc-name %s: cluster %s has no such %s MachineHealthCheck: use one of %s", name, key.Name, target, strings.Join(names, ", "))
}
