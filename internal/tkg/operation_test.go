package tkg

import (
	"testing"
	"time"
)

// TestOperationAnnotations: an operation's annotations read back as written, its end removes
// its TKGOperationInfo and leaves another operation's, and the observed time round-trips TKG's
// layout.
func TestOperationAnnotations(t *testing.T) {
	start := time.Date(2026, 12, 2, 19, 0, 0, 500, time.UTC)
	a := OperationAnnotations(OperationUpgrade, start, 30*time.Minute)
	info, ok := ReadOperation(a)
	if !ok || info.Operation != OperationUpgrade || info.OperationTimeout != 1800 || info.OperationStartTimestamp != "2026-12-02 19:00:00.0000005 +0000 UTC" {
		t.Errorf("read back %+v, %v", info, ok)
	}
	if observed, ok := LastObserved(a); !ok || !observed.Equal(start) {
		t.Errorf("last observed %s, %v, want %s", observed, ok, start)
	}
	if EndOperation(a, OperationCreate) {
		t.Error("ending a create removed an upgrade's TKGOperationInfo")
	}
	if !EndOperation(a, OperationUpgrade) {
		t.Error("ending the upgrade found no TKGOperationInfo")
	}
	if _, ok := ReadOperation(a); ok || a[AnnotationOperationLastObservedTimestamp] == "" {
		t.Errorf("after the end: %v", a)
	}
	if _, ok := LastObserved(map[string]string{}); ok {
		t.Error("a Cluster without the annotation has a last observed time")
	}
}
