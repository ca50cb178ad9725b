package packaging

import (
	"context"
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// failedStatus is kapp-controller's status of a failed reconcile: its friendly description holds
// the error, its useful error message the failed step's standard error.
func failedStatus() kappctrlv1alpha1.GenericStatus {
	return kappctrlv1alpha1.GenericStatus{ObservedGeneration: 1,
		Conditions:          []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.ReconcileFailed, Status: corev1.ConditionTrue, Message: "Error (see .status.usefulErrorMessage for details)"}},
		FriendlyDescription: "Reconcile failed: Templating dir: waitid: no child processes",
		UsefulErrorMessage:  "resolve | final: r/a@sha256:1 -> r/a@sha256:1\n"}
}

// TestWaitForGoesPastARepositorysFirstFailures: a repository that fails once and then reconciles
// is waited for; one that keeps failing is reported once kapp-controller has failed it
// repositoryFailures times in a row, with kapp-controller's error, not only its tool's output.
func TestWaitForGoesPastARepositorysFirstFailures(t *testing.T) {
	c := &Client{PollInterval: time.Millisecond}
	succeededStatus := kappctrlv1alpha1.GenericStatus{ObservedGeneration: 1,
		Conditions: []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.ReconcileSucceeded, Status: corev1.ConditionTrue}}}
	polls := 0
	err := c.waitFor(t.Context(), "package repository r", time.Minute, retried{failures: repositoryFailures},
		func(context.Context) (kappctrlv1alpha1.GenericStatus, int64, int, error) {
			polls++
			if polls < 3 {
				return failedStatus(), 1, 1, nil
			}
			return succeededStatus, 1, 0, nil
		})
	if err != nil || polls != 3 {
		t.Errorf("a repository that failed once: %v after %d polls", err, polls)
	}

	failures := 0
	err = c.waitFor(t.Context(), "package repository r", time.Minute, retried{failures: repositoryFailures},
		func(context.Context) (kappctrlv1alpha1.GenericStatus, int64, int, error) {
			failures++
			return failedStatus(), 1, failures, nil
		})
	want := "package repository r reconcile failed: Reconcile failed: Templating dir: waitid: no child processes\nresolve | final: r/a@sha256:1 -> r/a@sha256:1"
	if err == nil || err.Error() != want || failures != repositoryFailures {
		t.Errorf("a repository that keeps failing: after %d failures\n%v\nwant\n%s", failures, err, want)
	}

	// A package install's wait without retries reports its first failure.
	err = c.waitFor(t.Context(), "package install p", time.Minute, retried{},
		func(context.Context) (kappctrlv1alpha1.GenericStatus, int64, int, error) {
			return failedStatus(), 1, 0, nil
		})
	if err == nil || !strings.Contains(err.Error(), "waitid: no child processes") {
		t.Errorf("a package install that failed: %v", err)
	}
}
