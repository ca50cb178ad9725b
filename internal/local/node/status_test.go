package node

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// A pod whose status has not changed is not patched again: the status the agent builds holds
// times in nanoseconds, which the API server stores to the second, and compared as built every
// pass of every pod sent a patch that changed nothing.
func TestUnchangedPodStatusIsNotPatched(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "coredns", Image: "coredns:v1.12.4"}}}}
	patches := 0
	c := fake.NewClientBuilder().WithObjects(pod).WithStatusSubresource(&corev1.Pod{}).WithInterceptorFuncs(interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}).Build()
	a := &Agent{client: c}
	// Started at a time with nanoseconds, as a process's start is read.
	started := time.Date(2026, 11, 29, 5, 40, 12, 345678901, time.UTC)
	containers := []corev1.ContainerStatus{{Name: "coredns", Image: "coredns:v1.12.4", Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}}}

	for pass := 1; pass <= 3; pass++ {
		current := &corev1.Pod{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(pod), current); err != nil {
			t.Fatal(err)
		}
		if err := a.patchPodStatus(t.Context(), current, podStatus(current, containers, nil, "100.96.1.5", "172.18.2.3")); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
	}
	if patches != 1 {
		t.Errorf("three passes over an unchanged pod sent %d patches, want 1", patches)
	}
	current := &corev1.Pod{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(pod), current); err != nil {
		t.Fatal(err)
	}
	if current.Status.Phase != corev1.PodRunning || !current.Status.ContainerStatuses[0].State.Running.StartedAt.Equal(&metav1.Time{Time: started.Truncate(time.Second)}) {
		t.Errorf("the stored status: phase %s, containers %+v", current.Status.Phase, current.Status.ContainerStatuses)
	}
}
