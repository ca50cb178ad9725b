package clusterctl

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRecorder: the move's mutator keeps each object once, as first seen (the stubs it later
// patches to resume a Cluster add nothing), without the annotations move sets, and writes it.
func TestRecorder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "move")
	r, err := newRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	cluster := &unstructured.Unstructured{}
	cluster.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	cluster.SetKind("Cluster")
	cluster.SetNamespace("tkg-system")
	cluster.SetName("mc")
	cluster.SetLabels(map[string]string{"cluster-role.tkg.tanzu.vmware.com/management": ""})
	cluster.SetAnnotations(map[string]string{"cluster.x-k8s.io/paused": "", "TKGVERSION": "v2.5.2"})
	if err := r.record(cluster); err != nil {
		t.Fatal(err)
	}
	if cluster.GetAnnotations()["cluster.x-k8s.io/paused"] != "" || len(cluster.GetAnnotations()) != 2 {
		t.Errorf("the recorder changed the object it was given: %v", cluster.GetAnnotations())
	}
	stub := &unstructured.Unstructured{}
	stub.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	stub.SetKind("Cluster")
	stub.SetNamespace("tkg-system")
	stub.SetName("mc")
	if err := r.record(stub); err != nil {
		t.Fatal(err)
	}
	if len(r.g) != 1 || r.g[0].Labels["cluster-role.tkg.tanzu.vmware.com/management"] != "" || len(r.g[0].Labels) != 1 ||
		r.g[0].Annotations["TKGVERSION"] != "v2.5.2" || len(r.g[0].Annotations) != 1 {
		t.Errorf("recorded %+v, want the Cluster once, as first seen, without move's annotations", r.g)
	}
	if _, err := os.Stat(filepath.Join(dir, "cluster_tkg-system_mc.yaml")); err != nil {
		t.Errorf("the object is not written: %v", err)
	}
}
