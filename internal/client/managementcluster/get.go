package managementcluster

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/tree"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/tkg"
)

// Summary is one row of `management-cluster get`'s table.
type Summary struct {
	Name, Namespace, Status, ControlPlane, Workers, Kubernetes, Roles, Plan, TKR string
}

// Get reads the management cluster's summary from its own Cluster, the tree of its Cluster API
// objects with their conditions (clusterctl's discovery), and the providers installed.
func Get(ctx context.Context, c client.Client, name string) (*Summary, *tree.ObjectTree, []unstructured.Unstructured, error) {
	cl := &clusterv1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: tkg.SystemNamespace, Name: name}, cl); err != nil {
		return nil, nil, nil, fmt.Errorf("management cluster %s: %w", name, err)
	}
	s := Summarize(cl)
	t, err := tree.Discovery(ctx, c, cl.Namespace, cl.Name, tree.DiscoverOptions{ShowOtherConditions: "", Grouping: false})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("discovering the objects of %s: %w", name, err)
	}
	providers := &unstructured.UnstructuredList{}
	providers.SetAPIVersion("clusterctl.cluster.x-k8s.io/v1alpha3")
	providers.SetKind("ProviderList")
	if err := c.List(ctx, providers); err != nil {
		return nil, nil, nil, fmt.Errorf("listing the providers: %w", err)
	}
	return s, t, providers.Items, nil
}

// Summarize is TKG's row of a Cluster: running, creating, updating, deleting or failed, with
// ready over desired machines.
func Summarize(c *clusterv1.Cluster) *Summary {
	s := &Summary{Name: c.Name, Namespace: c.Namespace, Kubernetes: c.Spec.Topology.Version, Roles: "<none>",
		Plan: c.Annotations[tkg.AnnotationPlan], TKR: c.Labels["run.tanzu.vmware.com/tkr"]}
	if _, ok := c.Labels[tkg.LabelManagementCluster]; ok {
		s.Roles = "management"
	}
	cp, w := c.Status.ControlPlane, c.Status.Workers
	if cp != nil {
		s.ControlPlane = fmt.Sprintf("%d/%d", ptr.Deref(cp.ReadyReplicas, 0), ptr.Deref(cp.DesiredReplicas, 0))
	}
	if w != nil {
		s.Workers = fmt.Sprintf("%d/%d", ptr.Deref(w.ReadyReplicas, 0), ptr.Deref(w.DesiredReplicas, 0))
	}
	switch {
	case !c.DeletionTimestamp.IsZero():
		s.Status = "deleting"
	case conditions.IsTrue(c, clusterv1.ClusterRollingOutCondition):
		s.Status = "updating"
	case conditions.IsTrue(c, clusterv1.AvailableCondition):
		s.Status = "running"
	default:
		s.Status = "creating"
	}
	return s
}

// PrintTree prints clusterctl's object tree as TKG's `get` shows it: NAME READY REASON SINCE
// MESSAGE, messages cut at 100 characters.
func PrintTree(out io.Writer, t *tree.ObjectTree) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tREADY\tREASON\tSINCE\tMESSAGE")
	var walk func(o client.Object, prefix, childPrefix string)
	walk = func(o client.Object, prefix, childPrefix string) {
		name := tree.GetMetaName(o)
		if name == "" {
			name = o.GetObjectKind().GroupVersionKind().Kind + "/" + o.GetName()
		} else if !tree.IsVirtualObject(o) {
			name += " - " + o.GetObjectKind().GroupVersionKind().Kind + "/" + o.GetName()
		}
		if o == t.GetRoot() {
			name = "/" + o.GetName()
		}
		ready, reason, since, message := "", "", "", ""
		if c := tree.GetReadyCondition(o); c != nil {
			ready, reason = string(c.Status), c.Reason
			since = duration.HumanDuration(time.Since(c.LastTransitionTime.Time))
			message = strings.ReplaceAll(c.Message, "\n", " ")
			if len(message) > 100 {
				message = message[:97] + "..."
			}
		}
		fmt.Fprintf(w, "%s%s\t%s\t%s\t%s\t%s\n", prefix, name, ready, reason, since, message)
		children := t.GetObjectsByParent(o.GetUID())
		slices.SortStableFunc(children, func(a, b client.Object) int { return tree.GetZOrder(b) - tree.GetZOrder(a) })
		for i, ch := range children {
			if i == len(children)-1 {
				walk(ch, childPrefix+"└─", childPrefix+"  ")
			} else {
				walk(ch, childPrefix+"├─", childPrefix+"│ ")
			}
		}
	}
	walk(t.GetRoot(), "", "")
	return w.Flush()
}
