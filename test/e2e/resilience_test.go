package e2e

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// checkOwnersComeBack is Cluster API's owner-reference resilience check (its e2e framework's
// ValidateOwnerReferencesResilience, for what a velero restore loses) over one workload
// cluster's objects on its management cluster: every object of the namespace that is the
// cluster's (by name or by Cluster API's cluster-name label) and has owner references loses
// them while the Cluster is paused; once it is unpaused, the controllers that set them (Cluster
// API's, the local provider, the addons manager, kapp-controller) must write each one back.
func checkOwnersComeBack(t *testing.T, lc *localCluster, namespace, clusterName string) {
	t.Helper()
	ctx := t.Context()
	c := lc.client
	dc, err := discovery.NewDiscoveryClientForConfig(lc.config)
	if err != nil {
		t.Fatal(err)
	}
	resources, err := dc.ServerPreferredNamespacedResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		t.Fatalf("discovery: %v", err)
	}
	type owned struct {
		gvk    schema.GroupVersionKind
		name   string
		owners []string
	}
	ownersOf := func(o client.Object) []string {
		var out []string
		for _, ref := range o.GetOwnerReferences() {
			out = append(out, fmt.Sprintf("%s/%s (controller %t)", ref.Kind, ref.Name, ref.Controller != nil && *ref.Controller))
		}
		sort.Strings(out)
		return out
	}
	var objs []owned
	for _, rl := range resources {
		gv, _ := schema.ParseGroupVersion(rl.GroupVersion)
		for _, r := range rl.APIResources {
			if !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "patch") || strings.Contains(r.Name, "/") || r.Kind == "Event" {
				continue
			}
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gv.WithKind(r.Kind + "List"))
			if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
				t.Fatalf("list %s: %v", r.Kind, err)
			}
			for i := range list.Items {
				o := &list.Items[i]
				ours := o.GetName() == clusterName || strings.HasPrefix(o.GetName(), clusterName+"-") || o.GetLabels()["cluster.x-k8s.io/cluster-name"] == clusterName
				if ours && len(o.GetOwnerReferences()) > 0 {
					objs = append(objs, owned{gv.WithKind(r.Kind), o.GetName(), ownersOf(o)})
				}
			}
		}
	}
	if len(objs) < 20 {
		t.Fatalf("only %d objects of cluster %s have owner references: %v", len(objs), clusterName, objs)
	}

	setPaused := func(paused bool) {
		t.Helper()
		patch := fmt.Appendf(nil, `{"spec":{"paused":%t}}`, paused)
		cl := &unstructured.Unstructured{}
		cl.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"})
		cl.SetNamespace(namespace)
		cl.SetName(clusterName)
		if err := c.Patch(ctx, cl, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatalf("pause %t: %v", paused, err)
		}
	}
	setPaused(true)
	for _, o := range objs {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.gvk)
		u.SetNamespace(namespace)
		u.SetName(o.name)
		if err := c.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"ownerReferences":null}}`))); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("remove the owner references of %s %s: %v", o.gvk.Kind, o.name, err)
		}
	}
	stripped := time.Now()
	setPaused(false)
	eventually(t, 3*time.Minute, fmt.Sprintf("the owner references of %d objects of cluster %s back", len(objs), clusterName), func() error {
		var missing []string
		for _, o := range objs {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(o.gvk)
			if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: o.name}, u); err != nil {
				if apierrors.IsNotFound(err) {
					continue // replaced since, as a rollout replaces its objects
				}
				return err
			}
			if got := ownersOf(u); !slices.Equal(got, o.owners) {
				missing = append(missing, fmt.Sprintf("%s %s: %v, want %v", o.gvk.Kind, o.name, got, o.owners))
			}
		}
		if len(missing) > 0 {
			return errors.New(strings.Join(missing, "; "))
		}
		return nil
	})
	t.Logf("the owner references of %d objects of cluster %s came back within %s", len(objs), clusterName, time.Since(stripped).Round(100*time.Millisecond))
}
