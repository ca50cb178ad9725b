package cluster

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/tree"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// TreeOptions are TKG's `get` flags for the object tree.
type TreeOptions struct {
	// ShowAllConditions lists the kinds or kind/name whose every condition is shown, "all" for
	// every object (--show-all-conditions).
	ShowAllConditions string
	// ShowDetails shows a machine's infrastructure and bootstrap objects even when they are
	// ready (--show-details).
	ShowDetails bool
	// ShowGroupMembers lists every machine, where alike ones are grouped by default
	// (--show-group-members).
	ShowGroupMembers bool
}

// Get reads a cluster's summary, the tree of its Cluster API objects with their conditions
// (clusterctl's discovery, as clusterctl describe) and its ClusterBootstrap (nil when it has
// none).
func Get(ctx context.Context, c client.Client, key client.ObjectKey, opts TreeOptions) (*Summary, *tree.ObjectTree, *runv1alpha3.ClusterBootstrap, error) {
	cl, err := getCluster(ctx, c, key)
	if err != nil {
		return nil, nil, nil, err
	}
	s := Summarize(cl, time.Now())
	t, err := tree.Discovery(ctx, c, cl.Namespace, cl.Name, tree.DiscoverOptions{
		ShowOtherConditions: opts.ShowAllConditions, Echo: opts.ShowDetails, Grouping: !opts.ShowGroupMembers})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("discovering the objects of %s: %w", key.Name, err)
	}
	cb := &runv1alpha3.ClusterBootstrap{}
	if err := c.Get(ctx, key, cb); apierrors.IsNotFound(err) {
		cb = nil
	} else if err != nil {
		return nil, nil, nil, err
	}
	return &s, t, cb, nil
}

// PrintPackages prints a ClusterBootstrap's packages with the condition of each, as `cluster
// get` shows a cluster's add-ons.
func PrintPackages(out io.Writer, cb *runv1alpha3.ClusterBootstrap) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "TKR: %s\n\n", cb.Status.ResolvedTKR)
	fmt.Fprintln(w, "PACKAGE\tCONDITION\tSTATUS\tMESSAGE")
	if cb.Spec == nil {
		return w.Flush()
	}
	pkgs := append([]*runv1alpha3.ClusterBootstrapPackage{cb.Spec.Kapp, cb.Spec.CNI, cb.Spec.CPI, cb.Spec.CSI}, cb.Spec.AdditionalPackages...)
	for _, p := range pkgs {
		if p == nil {
			continue
		}
		condition, status, message := "", "", ""
		prefix := tkg.ConditionPrefix(p.RefName) + "-"
		for _, c := range cb.Status.Conditions {
			if strings.HasPrefix(c.Type, prefix) {
				condition, status, message = strings.TrimPrefix(c.Type, prefix), string(c.Status), c.Message
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", p.RefName, condition, status, message)
	}
	return w.Flush()
}

// PrintTree prints clusterctl's object tree as TKG's `get` shows it: NAME READY REASON SINCE
// MESSAGE, messages cut at 100 characters. READY is an object's Ready condition, or Available
// for the objects Cluster API's v1beta2 gives no Ready (Cluster, control plane, machine
// deployments). Children are ordered as clusterctl orders them: higher z-order first, then by
// name.
func PrintTree(out io.Writer, t *tree.ObjectTree) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tREADY\tREASON\tSINCE\tMESSAGE")
	rowName := func(o client.Object) string {
		if o == t.GetRoot() {
			return "/" + o.GetName()
		}
		name := tree.GetMetaName(o)
		kindName := o.GetObjectKind().GroupVersionKind().Kind + "/" + o.GetName()
		switch {
		case tree.IsGroupObject(o):
			// Machines alike, grouped as clusterctl groups them.
			items := strings.Split(tree.GetGroupItems(o), tree.GroupItemsSeparator)
			return fmt.Sprintf("%d %ss...", len(items), strings.TrimSuffix(o.GetObjectKind().GroupVersionKind().Kind, "Group"))
		case tree.IsVirtualObject(o) && name == "":
			// A group clusterctl adds, such as Workers, goes by its name.
			return o.GetName()
		case tree.IsVirtualObject(o):
			return name
		case name == "":
			return kindName
		}
		return name + " - " + kindName
	}
	columns := func(c *metav1.Condition) (status, reason, since, message string) {
		if c == nil {
			return "", "", "", ""
		}
		message = strings.ReplaceAll(c.Message, "\n", " ")
		if len(message) > 100 {
			message = message[:97] + "..."
		}
		if !c.LastTransitionTime.IsZero() {
			since = duration.HumanDuration(time.Since(c.LastTransitionTime.Time))
		}
		return string(c.Status), c.Reason, since, message
	}
	var walk func(o client.Object, prefix, childPrefix string)
	walk = func(o client.Object, prefix, childPrefix string) {
		c := tree.GetReadyCondition(o)
		if c == nil {
			c = tree.GetAvailableCondition(o)
		}
		ready, reason, since, message := columns(c)
		fmt.Fprintf(w, "%s%s\t%s\t%s\t%s\t%s\n", prefix, rowName(o), ready, reason, since, message)
		children := t.GetObjectsByParent(o.GetUID())
		// Every other condition of an object --show-all-conditions names, under it.
		if tree.IsShowConditionsObject(o) {
			var others []metav1.Condition
			for _, oc := range tree.GetConditions(o) {
				if c == nil || oc.Type != c.Type {
					others = append(others, oc)
				}
			}
			line := "│ "
			if len(children) == 0 {
				line = "  "
			}
			for i, oc := range others {
				branch := "├─"
				if i == len(others)-1 {
					branch = "└─"
				}
				status, reason, since, message := columns(&oc)
				fmt.Fprintf(w, "%s%s%s%s\t%s\t%s\t%s\t%s\n", childPrefix, line, branch, oc.Type, status, reason, since, message)
			}
		}
		slices.SortFunc(children, func(a, b client.Object) int {
			if za, zb := tree.GetZOrder(a), tree.GetZOrder(b); za != zb {
				return zb - za
			}
			return strings.Compare(rowName(a), rowName(b))
		})
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
