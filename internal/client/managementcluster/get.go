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
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/tree"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Get reads the management cluster's summary from its own Cluster, the tree of its Cluster API
// objects with their conditions (clusterctl's discovery), and the providers installed.
func Get(ctx context.Context, c client.Client, name string) (*cluster.Summary, *tree.ObjectTree, []unstructured.Unstructured, error) {
	cl := &clusterv1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: tkg.SystemNamespace, Name: name}, cl); err != nil {
		return nil, nil, nil, fmt.Errorf("management cluster %s: %w", name, err)
	}
	s := cluster.Summarize(cl)
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
	return &s, t, providers.Items, nil
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
