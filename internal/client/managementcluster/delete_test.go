package managementcluster

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// TestHoldsIPPools: holdsIPPools finds the in-cluster IPAM provider's pools of every kind, on a
// cluster that serves only some of the kinds too.
func TestHoldsIPPools(t *testing.T) {
	v1alpha2 := schema.GroupVersion{Group: ipamGroup, Version: "v1alpha2"}
	serving := func(kinds ...string) meta.RESTMapper {
		m := meta.NewDefaultRESTMapper([]schema.GroupVersion{v1alpha2})
		for _, kind := range kinds {
			scope := meta.RESTScopeNamespace
			if strings.HasPrefix(kind, "Global") {
				scope = meta.RESTScopeRoot
			}
			m.Add(v1alpha2.WithKind(kind), scope)
		}
		return m
	}
	served := serving(ipPoolKinds...)
	pool := func(kind, namespace string) client.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1alpha2.WithKind(kind))
		u.SetName("nodes")
		u.SetNamespace(namespace)
		return u
	}
	for _, tc := range []struct {
		name   string
		mapper meta.RESTMapper
		objs   []client.Object
		want   bool
	}{
		{name: "without the provider's kinds", mapper: meta.NewDefaultRESTMapper(nil)},
		{name: "no pools", mapper: served},
		{name: "a namespaced pool", mapper: served, objs: []client.Object{pool("InClusterIPPool", "tkg-system")}, want: true},
		{name: "a global prefix pool", mapper: served, objs: []client.Object{pool("GlobalInClusterPrefixPool", "")}, want: true},
		{name: "a pool of the one kind served", mapper: serving("GlobalInClusterPrefixPool"),
			objs: []client.Object{pool("GlobalInClusterPrefixPool", "")}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithRESTMapper(tc.mapper).WithObjects(tc.objs...).Build()
			got, err := holdsIPPools(t.Context(), c)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("holdsIPPools = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCleanupClusterRefusesOneThatCannotReach: delete's -e with a local cluster whose nodes
// cannot reach the vCenter is refused before anything is installed on it or moved.
func TestCleanupClusterRefusesOneThatCannotReach(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cleanup.kubeconfig")
	kc := "apiVersion: v1\nkind: Config\ncurrent-context: slipway-plain\nclusters:\n- name: slipway-plain\n  cluster: {server: 'https://198.18.9.2:6443'}\n" +
		"contexts:\n- name: slipway-plain\n  context: {cluster: slipway-plain, user: slipway-plain}\nusers:\n- name: slipway-plain\n  user: {}\n"
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := progress.New(io.Discard, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	// Home is where a cleanup cluster's work would go, should the check let it through.
	d := &deletion{o: DeleteOptions{UseExistingCleanup: path, Store: storeOfReach(t), Home: t.TempDir()}, p: p,
		reach: bootstrapDestinations("vsphere", "203.0.113.7", "", 0)}
	err = d.cleanupCluster(t.Context())
	if err == nil || !strings.Contains(err.Error(), "the nodes of local cluster plain cannot reach vCenter 203.0.113.7:443 (VSPHERE_SERVER)") {
		t.Errorf("cleanupCluster = %v, want the refusal of a cluster that cannot reach the vCenter", err)
	}
	if d.cleanup != nil {
		t.Error("the refused cleanup cluster was connected to")
	}
}
