package node

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podStatus builds a pod's status from its containers' statuses, as the kubelet does.
func podStatus(pod *corev1.Pod, containers, inits []corev1.ContainerStatus, podIP, hostIP string) corev1.PodStatus {
	now := metav1.Now()
	status := corev1.PodStatus{
		HostIP:                hostIP,
		HostIPs:               []corev1.HostIP{{IP: hostIP}},
		PodIP:                 podIP,
		PodIPs:                []corev1.PodIP{{IP: podIP}},
		StartTime:             pod.Status.StartTime,
		QOSClass:              qosClass(pod),
		ContainerStatuses:     containers,
		InitContainerStatuses: inits,
	}
	if status.StartTime == nil {
		status.StartTime = &now
	}
	initialized, ready, running, terminated, failed := true, true, false, 0, false
	for _, s := range inits {
		if s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 {
			initialized = false
		}
	}
	for _, s := range containers {
		ready = ready && s.Ready
		if s.State.Running != nil {
			running = true
		}
		if t := s.State.Terminated; t != nil {
			terminated++
			failed = failed || t.ExitCode != 0
		}
	}
	switch {
	case terminated == len(containers) && len(containers) > 0 && failed:
		status.Phase = corev1.PodFailed
	case terminated == len(containers) && len(containers) > 0:
		status.Phase = corev1.PodSucceeded
	case running || terminated > 0:
		status.Phase = corev1.PodRunning
	default:
		status.Phase = corev1.PodPending
	}
	ready = ready && initialized && status.Phase == corev1.PodRunning
	condition := func(t corev1.PodConditionType, ok bool) corev1.PodCondition {
		s := corev1.ConditionFalse
		if ok {
			s = corev1.ConditionTrue
		}
		c := corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now}
		for _, old := range pod.Status.Conditions {
			if old.Type == t && old.Status == s {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		if !ok && (t == corev1.PodReady || t == corev1.ContainersReady) {
			c.Reason = "ContainersNotReady"
		}
		return c
	}
	status.Conditions = []corev1.PodCondition{
		condition(corev1.PodReadyToStartContainers, true),
		condition(corev1.PodInitialized, initialized),
		condition(corev1.ContainersReady, ready),
		condition(corev1.PodReady, ready),
		condition(corev1.PodScheduled, true),
	}
	return status
}

func qosClass(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	for _, c := range pod.Spec.Containers {
		if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
			return corev1.PodQOSBurstable
		}
	}
	return corev1.PodQOSBestEffort
}

// patchPodStatus writes the status when it differs from the pod's. The status is first made
// what the API server would store (its times to the second), as the kubelet's status manager
// normalizes it: compared unnormalized, a container's start time in nanoseconds never equals
// the stored one, and every pass of every pod sent a patch that changed nothing (780 a minute on
// an idle workload cluster of 15 pods, most of its API server's CPU).
func (a *Agent) patchPodStatus(ctx context.Context, pod *corev1.Pod, status corev1.PodStatus) error {
	status, err := stored(status)
	if err != nil {
		return fmt.Errorf("failed to read the status of Pod %s as stored: %w", klog.KObj(pod), err)
	}
	if equality.Semantic.DeepEqual(pod.Status, status) {
		return nil
	}
	orig := pod.DeepCopy()
	pod.Status = status
	if err := a.client.Status().Patch(ctx, pod, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("failed to update status of Pod %s: %w", klog.KObj(pod), err)
	}
	return nil
}

// stored is the status as the API server stores it: through its JSON form, in which times have
// whole seconds.
func stored(status corev1.PodStatus) (corev1.PodStatus, error) {
	data, err := json.Marshal(status)
	if err != nil {
		return status, err
	}
	var out corev1.PodStatus
	return out, json.Unmarshal(data, &out)
}
