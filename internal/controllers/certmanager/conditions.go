package certmanager

// How the controllers turn what their phases found into the Ready condition and a result.

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// conditionError is an error a phase returns with the reason the Ready condition reports.
type conditionError struct {
	reason string
	err    error
	// message is what the condition says; empty is the error's text.
	message string
	// retryAfter, when set, makes the error a wait for another object: it is looked at again
	// after that long, quietly, rather than with the controller's backoff.
	retryAfter time.Duration
}

func (e *conditionError) Error() string { return e.err.Error() }
func (e *conditionError) Unwrap() error { return e.err }

// withReason gives err the reason the Ready condition reports.
func withReason(reason string, err error) error { return &conditionError{reason: reason, err: err} }

// setReady sets the Ready condition at now: True with reason and message when err is nil, False
// with the reason and message of the conditionError err carries. An error that carries none is
// transient and leaves the condition as it was.
func setReady(conditions *[]metav1.Condition, generation int64, now time.Time, err error, reason, message string) {
	cond := metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: reason, Message: message,
		ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now.Truncate(time.Second))}
	if err != nil {
		var ce *conditionError
		if !errors.As(err, &ce) {
			return
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ce.reason, ce.Error()
		if ce.message != "" {
			cond.Message = ce.message
		}
	}
	meta.SetStatusCondition(conditions, cond)
}

// readyChanged says whether the Ready condition's status or reason differs between two lists,
// which is when an Event tells it.
func readyChanged(before, after []metav1.Condition) bool {
	b, a := meta.FindStatusCondition(before, ConditionReady), meta.FindStatusCondition(after, ConditionReady)
	if a == nil {
		return false
	}
	return b == nil || b.Status != a.Status || b.Reason != a.Reason
}

// retry turns a phase's result and error into what Reconcile returns: a wait for another object
// looks again after its period without an error, since controller-runtime drops a RequeueAfter
// returned with one.
func retry(ctx context.Context, result ctrl.Result, err error) (ctrl.Result, error) {
	var ce *conditionError
	if errors.As(err, &ce) && ce.retryAfter > 0 {
		ctrl.LoggerFrom(ctx).V(2).Info("Waiting", "reason", ce.reason, "message", ce.Error(), "retryAfter", ce.retryAfter)
		return ctrl.Result{RequeueAfter: ce.retryAfter}, nil
	}
	return result, err
}
