package tkg

import (
	"encoding/json"
	"time"
)

// The operations TKGOperationInfo records.
const (
	OperationCreate  = "Create"
	OperationUpgrade = "Upgrade"
)

// TimestampLayout is TKG's layout of its operation timestamps.
const TimestampLayout = "2006-01-02 15:04:05.999999999 -0700 MST"

// Timestamp is t as TKG writes TKGOperationLastObservedTimestamp and the operation's start.
func Timestamp(t time.Time) string { return t.UTC().Format(TimestampLayout) }

// OperationInfo is TKG's TKGOperationInfo annotation: the operation the CLI started, when, and how
// long it may take (seconds).
type OperationInfo struct {
	Operation               string
	OperationStartTimestamp string
	OperationTimeout        int
}

// OperationAnnotations are the annotations of an operation started at now that may take timeout:
// TKGOperationInfo, and TKGOperationLastObservedTimestamp at its start.
func OperationAnnotations(operation string, now time.Time, timeout time.Duration) map[string]string {
	// A struct of strings and an int always marshals.
	info, _ := json.Marshal(OperationInfo{Operation: operation, OperationStartTimestamp: Timestamp(now), OperationTimeout: int(timeout.Seconds())})
	return map[string]string{AnnotationOperationInfo: string(info), AnnotationOperationLastObservedTimestamp: Timestamp(now)}
}

// ReadOperation reads a Cluster's TKGOperationInfo; false when there is none, or none readable.
func ReadOperation(annotations map[string]string) (OperationInfo, bool) {
	var info OperationInfo
	if err := json.Unmarshal([]byte(annotations[AnnotationOperationInfo]), &info); err != nil {
		return OperationInfo{}, false
	}
	return info, true
}

// EndOperation removes the TKGOperationInfo of a finished operation, so that a later rollout is
// not read against it, and says whether there was one; another operation's is left.
func EndOperation(annotations map[string]string, operation string) bool {
	if info, ok := ReadOperation(annotations); !ok || info.Operation != operation {
		return false
	}
	delete(annotations, AnnotationOperationInfo)
	return true
}

// LastObserved reads a Cluster's TKGOperationLastObservedTimestamp; false when there is none, or
// none readable.
func LastObserved(annotations map[string]string) (time.Time, bool) {
	t, err := time.Parse(TimestampLayout, annotations[AnnotationOperationLastObservedTimestamp])
	return t, err == nil
}
