package eventonce

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
)

// TestWarnsOnTransitionsOnly: the same cause twice is one Event; a new cause, or the same one
// after a success, is another; objects are told apart.
func TestWarnsOnTransitionsOnly(t *testing.T) {
	r := events.NewFakeRecorder(10)
	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "uid-a"}}
	b := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "uid-b"}}
	var w Warnings
	w.Warn(r, a, nil, "Failed", "Try", "no %s", "credentials")
	w.Warn(r, a, nil, "Failed", "Try", "no %s", "credentials")
	w.Warn(r, b, nil, "Failed", "Try", "no %s", "credentials")
	w.Warn(r, a, nil, "Failed", "Try", "no %s", "VSphereCluster")
	w.Clear(a)
	w.Warn(r, a, nil, "Failed", "Try", "no %s", "VSphereCluster")
	close(r.Events)
	var got []string
	for e := range r.Events {
		got = append(got, e)
	}
	want := []string{"Warning Failed no credentials", "Warning Failed no credentials", "Warning Failed no VSphereCluster", "Warning Failed no VSphereCluster"}
	if len(got) != len(want) {
		t.Fatalf("Events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Event %d %q, want %q", i, got[i], want[i])
		}
	}
}
