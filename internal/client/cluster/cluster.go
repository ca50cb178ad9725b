// Package cluster holds the flows of `slipway cluster`, tanzu's workload-cluster noun, run
// against a management cluster: create from TKG's flat configuration file with TKG's waits,
// list, scale and delete.
package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Summary is one cluster as `cluster list` and `management-cluster get` show it, in the tanzu
// CLI's JSON shape.
type Summary struct {
	Name         string            `json:"name"`
	Namespace    string            `json:"namespace"`
	Status       string            `json:"status"`
	Plan         string            `json:"plan"`
	ControlPlane string            `json:"controlplane"`
	Workers      string            `json:"workers"`
	Kubernetes   string            `json:"kubernetes"`
	Roles        []string          `json:"roles"`
	TKR          string            `json:"tkr"`
	Labels       map[string]string `json:"labels"`
}

// getCluster reads a workload cluster, saying how to find the clusters when it is not there.
func getCluster(ctx context.Context, c client.Client, key client.ObjectKey) (*clusterv1.Cluster, error) {
	cl := &clusterv1.Cluster{}
	if err := c.Get(ctx, key, cl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("cluster %s not found in namespace %s: `slipway cluster list -A` lists the clusters", key.Name, key.Namespace)
		}
		return nil, fmt.Errorf("failed to get cluster %s: %w", klog.KRef(key.Namespace, key.Name), err)
	}
	return cl, nil
}

// pollInterval is how often the CLI's waits look at the cluster: the management cluster is
// asked for a few objects each time, and a wait ends within this of what it waits for.
const pollInterval = time.Second

// Summarize is TKG's summary of a Cluster at now: its status (deleting, creating, createStalled,
// running, updating, updateStalled), ready over desired control-plane machines and workers, its
// roles from its labels.
func Summarize(c *clusterv1.Cluster, now time.Time) Summary {
	s := Summary{Name: c.Name, Namespace: c.Namespace, Plan: c.Annotations[tkg.AnnotationPlan], Kubernetes: c.Spec.Topology.Version,
		Roles: []string{}, TKR: c.Labels[runv1alpha3.LabelTKR], Labels: c.Labels}
	for k := range c.Labels {
		if role, ok := strings.CutPrefix(k, tkg.LabelClusterRolePrefix); ok {
			s.Roles = append(s.Roles, role)
		}
	}
	slices.Sort(s.Roles)
	if cp := c.Status.ControlPlane; cp != nil {
		s.ControlPlane = fmt.Sprintf("%d/%d", ptr.Deref(cp.ReadyReplicas, 0), ptr.Deref(cp.DesiredReplicas, 0))
	}
	if w := c.Status.Workers; w != nil && ptr.Deref(w.DesiredReplicas, 0) > 0 {
		s.Workers = fmt.Sprintf("%d/%d", ptr.Deref(w.ReadyReplicas, 0), ptr.Deref(w.DesiredReplicas, 0))
	}
	// TKG's rules: a creation is incomplete until the infrastructure, an initialized control
	// plane with a ready machine and, when it has workers, a ready worker are there; only an
	// incomplete creation can be createStalled. A complete cluster is running, or updating, and
	// updateStalled only while machines roll out to another version under an Upgrade record.
	switch {
	case !c.DeletionTimestamp.IsZero():
		s.Status = "deleting"
	case creationIncomplete(c):
		s.Status = stalledAs(c, now, tkg.OperationCreate, "creating", "createStalled")
	case conditions.IsTrue(c, clusterv1.AvailableCondition) && !conditions.IsTrue(c, clusterv1.ClusterRollingOutCondition) &&
		!conditions.IsTrue(c, clusterv1.ClusterScalingUpCondition) && !conditions.IsTrue(c, clusterv1.ClusterScalingDownCondition):
		s.Status = "running"
	case conditions.IsTrue(c, clusterv1.ClusterRollingOutCondition):
		s.Status = stalledAs(c, now, tkg.OperationUpgrade, "updating", "updateStalled")
	default:
		s.Status = "updating"
	}
	return s
}

// creationIncomplete is TKG's test of a cluster still being created: no infrastructure, no
// initialized control plane, no ready control-plane machine, or workers wanted and none ready.
func creationIncomplete(c *clusterv1.Cluster) bool {
	if !ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false) || !ptr.Deref(c.Status.Initialization.ControlPlaneInitialized, false) {
		return true
	}
	if cp := c.Status.ControlPlane; cp == nil || ptr.Deref(cp.ReadyReplicas, 0) == 0 {
		return true
	}
	w := c.Status.Workers
	return w != nil && ptr.Deref(w.DesiredReplicas, 0) > 0 && ptr.Deref(w.ReadyReplicas, 0) == 0
}

// stalledAs is stalled when the cluster's TKGOperationInfo is of the operation and its last
// observed time is older than the operation's timeout, as TKG decides, else inProgress.
func stalledAs(c *clusterv1.Cluster, now time.Time, operation, inProgress, stalled string) string {
	info, ok := tkg.ReadOperation(c.Annotations)
	if !ok || info.Operation != operation || info.OperationTimeout <= 0 {
		return inProgress
	}
	observed, ok := tkg.LastObserved(c.Annotations)
	if !ok {
		return inProgress
	}
	if now.Sub(observed) > time.Duration(info.OperationTimeout)*time.Second {
		return stalled
	}
	return inProgress
}

// RolesColumn is the roles as the table shows them.
func (s Summary) RolesColumn() string {
	if len(s.Roles) == 0 {
		return "<none>"
	}
	return strings.Join(s.Roles, ",")
}

// ListOptions are what List takes.
type ListOptions struct {
	// Namespace lists one namespace; AllNamespaces all of them.
	Namespace     string
	AllNamespaces bool
	// IncludeManagementCluster lists the management cluster too.
	IncludeManagementCluster bool
}

// List returns the clusters, sorted by namespace and name.
func List(ctx context.Context, c client.Client, o ListOptions) ([]Summary, error) {
	now := time.Now()
	list := &clusterv1.ClusterList{}
	var opts []client.ListOption
	if !o.AllNamespaces {
		opts = append(opts, client.InNamespace(o.Namespace))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	var out []Summary
	for i := range list.Items {
		if _, management := list.Items[i].Labels[tkg.LabelManagementCluster]; management && !o.IncludeManagementCluster {
			continue
		}
		out = append(out, Summarize(&list.Items[i], now))
	}
	slices.SortFunc(out, func(a, b Summary) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out, nil
}

// AuditLog is a cluster's audit log in slipway's home, as TKG's logs/<CLUSTER_NAME>.log: create,
// upgrade and delete write every line of theirs to it, and a successful delete removes it.
func AuditLog(home, name string) string { return filepath.Join(home, "logs", name+".log") }

// WaysOutError is a flow that stopped after it changed the cluster, which its controllers go on
// changing: the failed step and its cause, then what the user can do, as management-cluster
// create says them.
type WaysOutError struct {
	Err     error
	WaysOut string
}

// Error is the step's error, a blank line, then the ways out.
func (e *WaysOutError) Error() string { return e.Err.Error() + "\n\n" + e.WaysOut }

// Unwrap is the step's error: a *progress.StepError.
func (e *WaysOutError) Unwrap() error { return e.Err }
