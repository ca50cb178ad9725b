package deploy

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitReady waits until every object is ready as kapp judges it, and fails with what is not,
// and why, when the timeout passes or a Job fails.
func waitReady(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, timeout time.Duration) error {
	var pending []string
	var failed error
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		// pending keeps the last complete look, for the timeout message.
		var now []string
		for _, o := range objs {
			current := &unstructured.Unstructured{}
			current.SetGroupVersionKind(o.GroupVersionKind())
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), current); err != nil {
				if apierrors.IsNotFound(err) {
					now = append(now, fmt.Sprintf("%s: not found", refOf(o)))
					continue
				}
				return false, nil
			}
			ready, why, err := isReady(current)
			if err != nil {
				failed = fmt.Errorf("%s: %w", refOf(o), err)
				return false, failed
			}
			if !ready {
				now = append(now, fmt.Sprintf("%s: %s", refOf(o), why))
			}
		}
		pending = now
		return len(pending) == 0, nil
	})
	if failed != nil {
		return failed
	}
	if err != nil {
		return fmt.Errorf("waited %s for resources to be ready: %s", timeout, strings.Join(pending, "; "))
	}
	return nil
}

// isReady judges one object: workloads by their status, CRDs by Established, Jobs by completion.
func isReady(u *unstructured.Unstructured) (bool, string, error) {
	n := func(path ...string) int64 {
		v, _, _ := unstructured.NestedInt64(u.Object, path...)
		return v
	}
	generationSeen := n("status", "observedGeneration") >= u.GetGeneration()
	switch u.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps":
		want := n("spec", "replicas")
		if _, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); !found {
			want = 1
		}
		ok := generationSeen && n("status", "updatedReplicas") == want && n("status", "availableReplicas") == want
		return ok, fmt.Sprintf("%d of %d replicas available", n("status", "availableReplicas"), want), nil
	case "DaemonSet.apps":
		want := n("status", "desiredNumberScheduled")
		ok := generationSeen && n("status", "updatedNumberScheduled") == want && n("status", "numberAvailable") == want
		return ok, fmt.Sprintf("%d of %d pods available", n("status", "numberAvailable"), want), nil
	case "StatefulSet.apps":
		want := n("spec", "replicas")
		ok := generationSeen && n("status", "readyReplicas") == want && n("status", "updatedReplicas") == want
		return ok, fmt.Sprintf("%d of %d replicas ready", n("status", "readyReplicas"), want), nil
	case "Job.batch":
		if condition(u, "Failed") {
			return false, "", fmt.Errorf("job failed")
		}
		return condition(u, "Complete"), "not complete", nil
	case "CustomResourceDefinition.apiextensions.k8s.io":
		return condition(u, "Established"), "not established", nil
	case "APIService.apiregistration.k8s.io":
		return condition(u, "Available"), "not available", nil
	}
	return true, "", nil
}

func condition(u *unstructured.Unstructured, t string) bool {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]interface{})
		if m["type"] == t && m["status"] == "True" {
			return true
		}
	}
	return false
}

// waitGone waits until the objects no longer exist.
func waitGone(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, timeout time.Duration) error {
	var left []string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		left = nil
		for _, o := range objs {
			current := &unstructured.Unstructured{}
			current.SetGroupVersionKind(o.GroupVersionKind())
			err := c.Get(ctx, client.ObjectKeyFromObject(o), current)
			if err == nil {
				left = append(left, refOf(o).String())
			} else if !apierrors.IsNotFound(err) && !isNoMatch(err) {
				return false, err
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waited %s for deletion of %s", timeout, strings.Join(left, ", "))
	}
	return nil
}
