package config

import (
	"math"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// HealthChecks are the machine health checks TKG gives a cluster: on the control plane and on
// every machine deployment, a machine whose node has been Ready Unknown or False too long (or
// that has no node after NodeStartupTimeout) is remediated.
type HealthChecks struct {
	ControlPlane, Workers                                        bool
	UnknownStatusTimeout, FalseStatusTimeout, NodeStartupTimeout time.Duration
	// MaxUnhealthyControlPlane and MaxUnhealthyWorkers stop remediation when more machines
	// than this are unhealthy (a number or a percentage).
	MaxUnhealthyControlPlane, MaxUnhealthyWorkers intstr.IntOrString
}

// healthChecks reads the machine health check variables. As in TKG, ENABLE_MHC true or false
// decides for both the control plane and the workers; unset, ENABLE_MHC_CONTROL_PLANE and
// ENABLE_MHC_WORKER_NODE (both true by default) decide.
func (k *completer) healthChecks() {
	h := &k.c.HealthChecks
	h.ControlPlane = k.boolean(EnableMHCControlPlane, k.value(EnableMHCControlPlane, "true"))
	h.Workers = k.boolean(EnableMHCWorkerNode, k.value(EnableMHCWorkerNode, "true"))
	if all, ok := k.v.Get(EnableMHC); ok {
		h.ControlPlane = k.boolean(EnableMHC, all)
		h.Workers = h.ControlPlane
	}
	h.UnknownStatusTimeout = k.duration(MHCUnknownStatusTimeout, "5m", 0)
	h.FalseStatusTimeout = k.duration(MHCFalseStatusTimeout, "12m", 0)
	// Cluster API takes no node startup timeout under 30s, but 0 for none.
	h.NodeStartupTimeout = k.duration(NodeStartupTimeout, "20m", 30*time.Second)
	h.MaxUnhealthyControlPlane = k.maxUnhealthy(MHCMaxUnhealthyControlPlane)
	h.MaxUnhealthyWorkers = k.maxUnhealthy(MHCMaxUnhealthyWorkerNode)
}

// duration reads a duration (5m, 90s, 1h30m) of whole seconds, 0 or at least minimum.
func (k *completer) duration(name, def string, minimum time.Duration) time.Duration {
	value := k.value(name, def)
	d, err := time.ParseDuration(value)
	if err != nil || d < 0 || d%time.Second != 0 || d > math.MaxInt32*time.Second || (d != 0 && d < minimum) {
		if minimum > 0 {
			k.bad("invalid %s %q: use 0 (no limit) or a duration of whole seconds of at least %s, as 20m or 1h30m", name, value, minimum)
		} else {
			k.bad("invalid %s %q: use a duration of whole seconds, as 5m, 90s or 1h30m", name, value)
		}
	}
	return d
}

// percentage is a number of percent from 0 to 100.
var percentage = regexp.MustCompile(`^(100|[1-9]?[0-9])%$`)

// maxUnhealthy reads a number of machines or a percentage of them.
func (k *completer) maxUnhealthy(name string) intstr.IntOrString {
	value := k.value(name, "100%")
	v := intstr.Parse(value)
	if (v.Type == intstr.Int && v.IntVal < 0) || (v.Type == intstr.String && !percentage.MatchString(value)) {
		k.bad("invalid %s %q: use a number of machines or a percentage of them, as 2 or 40%%", name, value)
	}
	return v
}

// conditions are the node conditions that make a machine unhealthy.
func (h HealthChecks) conditions() []clusterv1.UnhealthyNodeCondition {
	return []clusterv1.UnhealthyNodeCondition{
		{Type: "Ready", Status: "Unknown", TimeoutSeconds: ptr.To(int32(h.UnknownStatusTimeout / time.Second))},
		{Type: "Ready", Status: "False", TimeoutSeconds: ptr.To(int32(h.FalseStatusTimeout / time.Second))},
	}
}

// controlPlane is the control plane's health check in the Cluster's topology: the ClusterClasses
// define none, so the Cluster carries it whole.
func (h HealthChecks) controlPlane() clusterv1.ControlPlaneTopologyHealthCheck {
	if !h.ControlPlane {
		return clusterv1.ControlPlaneTopologyHealthCheck{Enabled: ptr.To(false)}
	}
	maxUnhealthy := h.MaxUnhealthyControlPlane
	return clusterv1.ControlPlaneTopologyHealthCheck{
		Enabled: ptr.To(true),
		Checks: clusterv1.ControlPlaneTopologyHealthCheckChecks{
			NodeStartupTimeoutSeconds: ptr.To(int32(h.NodeStartupTimeout / time.Second)),
			UnhealthyNodeConditions:   h.conditions(),
		},
		Remediation: clusterv1.ControlPlaneTopologyHealthCheckRemediation{
			TriggerIf: clusterv1.ControlPlaneTopologyHealthCheckRemediationTriggerIf{UnhealthyLessThanOrEqualTo: &maxUnhealthy},
		},
	}
}

// worker is a machine deployment's health check in the Cluster's topology.
func (h HealthChecks) worker() clusterv1.MachineDeploymentTopologyHealthCheck {
	if !h.Workers {
		return clusterv1.MachineDeploymentTopologyHealthCheck{Enabled: ptr.To(false)}
	}
	maxUnhealthy := h.MaxUnhealthyWorkers
	return clusterv1.MachineDeploymentTopologyHealthCheck{
		Enabled: ptr.To(true),
		Checks: clusterv1.MachineDeploymentTopologyHealthCheckChecks{
			NodeStartupTimeoutSeconds: ptr.To(int32(h.NodeStartupTimeout / time.Second)),
			UnhealthyNodeConditions:   h.conditions(),
		},
		Remediation: clusterv1.MachineDeploymentTopologyHealthCheckRemediation{
			TriggerIf: clusterv1.MachineDeploymentTopologyHealthCheckRemediationTriggerIf{UnhealthyLessThanOrEqualTo: &maxUnhealthy},
		},
	}
}
