package clusterctl

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// moveAnnotations are what move itself sets and clears while objects are in flight; they are
// not part of what a move must keep.
var moveAnnotations = []string{
	"cluster.x-k8s.io/paused",
	"clusterctl.cluster.x-k8s.io/delete-for-move",
	"clusterctl.cluster.x-k8s.io/block-move",
}

// Node is one object of the graph clusterctl moves, as a move must keep it: its identity, its
// owners by kind and name (their UIDs change), finalizers, labels and annotations.
type Node struct {
	APIVersion, Kind, Namespace, Name string
	Owners, Finalizers                []string
	Labels, Annotations               map[string]string
}

func (n Node) String() string { return n.Kind + " " + n.Namespace + "/" + n.Name }

func nodeOf(u *unstructured.Unstructured) Node {
	n := Node{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(),
		Finalizers: slices.Sorted(slices.Values(u.GetFinalizers())), Labels: u.GetLabels(), Annotations: u.GetAnnotations()}
	for _, o := range u.GetOwnerReferences() {
		n.Owners = append(n.Owners, o.Kind+"/"+o.Name)
	}
	sort.Strings(n.Owners)
	for _, a := range moveAnnotations {
		delete(n.Annotations, a)
	}
	return n
}

// Graph is the set of objects clusterctl moves from one namespace.
type Graph []Node

// recorder keeps each object a move creates on its target, as it is on the source: the move's
// own discovery names the objects, the source says what they were, owners included (clusterctl
// rebuilds the owner references it creates from its graph, so what it creates cannot witness an
// owner it dropped). It is a clusterctl resource mutator that changes nothing and never fails
// the move, which is under way when it is called: what it cannot read is reported after.
type recorder struct {
	from client.Reader
	mu   sync.Mutex
	seen map[string]bool
	objs []*unstructured.Unstructured
	errs []error
}

// record is called on each object the move creates, then on the stubs it patches to resume the
// Clusters and ClusterClasses: only the first sight of an object is kept.
func (r *recorder) record(u *unstructured.Unstructured) error {
	key := u.GetAPIVersion() + "/" + u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[key] {
		return nil
	}
	r.seen[key] = true
	source := &unstructured.Unstructured{}
	source.SetGroupVersionKind(u.GroupVersionKind())
	if err := r.from.Get(context.Background(), client.ObjectKey{Namespace: u.GetNamespace(), Name: u.GetName()}, source); err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s %s/%s on the source: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err))
		return nil
	}
	r.objs = append(r.objs, source)
	return nil
}

// save writes each object to dir, one YAML file each, and returns their graph.
func (r *recorder) save(dir string) (Graph, error) {
	if err := errors.Join(r.errs...); err != nil {
		return nil, fmt.Errorf("the moved objects could not all be read from the source: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var g Graph
	for _, u := range r.objs {
		n := nodeOf(u)
		data, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		name := strings.ToLower(fmt.Sprintf("%s_%s_%s.yaml", n.Kind, n.Namespace, n.Name))
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
		g = append(g, n)
	}
	return g, nil
}

// Compare returns what of the graph the cluster c does not hold as it was: objects missing,
// and owners, finalizers, labels or annotations changed.
func (g Graph) Compare(ctx context.Context, c client.Reader) []string {
	var diffs []string
	for _, want := range g {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(want.APIVersion)
		u.SetKind(want.Kind)
		if err := c.Get(ctx, client.ObjectKey{Namespace: want.Namespace, Name: want.Name}, u); err != nil {
			diffs = append(diffs, fmt.Sprintf("%s: %v", want, err))
			continue
		}
		have := nodeOf(u)
		if !slices.Equal(have.Owners, want.Owners) {
			diffs = append(diffs, fmt.Sprintf("%s: owners %v, before the move %v", want, have.Owners, want.Owners))
		}
		if !slices.Equal(have.Finalizers, want.Finalizers) {
			diffs = append(diffs, fmt.Sprintf("%s: finalizers %v, before the move %v", want, have.Finalizers, want.Finalizers))
		}
		if d := mapDiff(have.Labels, want.Labels); d != "" {
			diffs = append(diffs, fmt.Sprintf("%s: labels %s", want, d))
		}
		if d := mapDiff(have.Annotations, want.Annotations); d != "" {
			diffs = append(diffs, fmt.Sprintf("%s: annotations %s", want, d))
		}
	}
	return diffs
}

// mapDiff says which keys of want have, or lack, in have.
func mapDiff(have, want map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if v, ok := have[k]; !ok {
			out = append(out, "lost "+k)
		} else if v != want[k] {
			out = append(out, fmt.Sprintf("%s=%q, before the move %q", k, v, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(have)) {
		if _, ok := want[k]; !ok {
			out = append(out, "gained "+k)
		}
	}
	return strings.Join(out, ", ")
}
