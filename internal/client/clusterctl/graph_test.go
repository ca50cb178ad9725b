package clusterctl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/slipway-dev/slipway/internal/scheme"
)

// moved is the object as clusterctl hands it to a mutator: its identity, its owner references
// rebuilt by clusterctl (here none), the paused annotation move sets.
func moved(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Cluster"))
	u.SetNamespace("tkg-system")
	u.SetName(name)
	u.SetAnnotations(map[string]string{"cluster.x-k8s.io/paused": ""})
	return u
}

// TestRecorder: the move's mutator keeps each moved object once, as it is on the source (owners
// included, which clusterctl rebuilds on what it creates), without the annotations move sets,
// changes nothing it is given, and reports after the move what it could not read.
func TestRecorder(t *testing.T) {
	source := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "tkg-system", Name: "mc",
		Labels:          map[string]string{"cluster-role.tkg.tanzu.vmware.com/management": ""},
		Annotations:     map[string]string{"cluster.x-k8s.io/paused": "", "TKGVERSION": "v2.5.2"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Owner", Name: "o", UID: "u"}}}}
	r := &recorder{from: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(source).Build(), seen: map[string]bool{}}
	u := moved("mc")
	for range 2 { // created, then patched to resume: recorded once
		if err := r.record(u); err != nil {
			t.Fatal(err)
		}
	}
	if len(u.GetAnnotations()) != 1 || len(u.GetOwnerReferences()) != 0 {
		t.Errorf("the recorder changed the object the move creates: %v %v", u.GetAnnotations(), u.GetOwnerReferences())
	}
	dir := filepath.Join(t.TempDir(), "move")
	g, err := r.save(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != 1 {
		t.Fatalf("recorded %d objects, want the Cluster once", len(g))
	}
	n := g[0]
	if _, ok := n.Labels["cluster-role.tkg.tanzu.vmware.com/management"]; !ok || len(n.Labels) != 1 {
		t.Errorf("labels %v, want the source's", n.Labels)
	}
	if _, paused := n.Annotations["cluster.x-k8s.io/paused"]; paused || n.Annotations["TKGVERSION"] != "v2.5.2" {
		t.Errorf("annotations %v, want the source's without move's", n.Annotations)
	}
	if len(n.Owners) != 1 || n.Owners[0] != "Owner/o" {
		t.Errorf("owners %v, want the source's Owner/o", n.Owners)
	}
	if _, err := os.Stat(filepath.Join(dir, "cluster_tkg-system_mc.yaml")); err != nil {
		t.Errorf("the object is not written: %v", err)
	}

	// An object the source does not hold does not fail the move under way; save reports it.
	if err := r.record(moved("gone")); err != nil {
		t.Fatalf("the mutator failed the move: %v", err)
	}
	if _, err := r.save(dir); err == nil || !strings.Contains(err.Error(), "Cluster tkg-system/gone on the source") {
		t.Errorf("save: want the unread object named, got %v", err)
	}
}
