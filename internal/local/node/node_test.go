package node

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIPPoolKeepsAddressesAndPairsLoopback(t *testing.T) {
	p, err := newIPPool("10.244.2.0/24", "127.5.2.0/24")
	if err != nil {
		t.Fatal(err)
	}
	loop, ip := p.allocate("")
	if ip != "10.244.2.2" || loop != "127.5.2.2" {
		t.Fatalf("first = %s, %s", loop, ip)
	}
	// A pod that already had an address (an agent restart) keeps it.
	if loop, ip := p.allocate("10.244.2.40"); ip != "10.244.2.40" || loop != "127.5.2.40" {
		t.Fatalf("kept = %s, %s", loop, ip)
	}
	// A taken or foreign address is not handed out twice.
	if _, ip := p.allocate("10.244.2.2"); ip != "10.244.2.3" {
		t.Fatalf("taken address gave %s", ip)
	}
	if _, ip := p.allocate("10.244.9.9"); ip != "10.244.2.4" {
		t.Fatalf("foreign address gave %s", ip)
	}
	p.release("10.244.2.2")
	if _, ip := p.allocate(""); ip != "10.244.2.2" {
		t.Fatalf("released address not reused: %s", ip)
	}
}

func TestBackoffDoublesToCapAndResets(t *testing.T) {
	b := crashLoopBackoff()
	var got []time.Duration
	for i := 0; i < 7; i++ {
		got = append(got, b.after(time.Second))
	}
	want := []time.Duration{10, 20, 40, 80, 160, 300, 300}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("backoff %v, want %v seconds", got, want)
		}
	}
	if d := b.after(11 * time.Minute); d != 10*time.Second {
		t.Fatalf("after ten minutes of running the backoff is %s, want 10s", d)
	}
}

func TestPodStatusPhases(t *testing.T) {
	running := corev1.ContainerStatus{Name: "a", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	waiting := corev1.ContainerStatus{Name: "b", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}
	done := corev1.ContainerStatus{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}
	failed := corev1.ContainerStatus{Name: "d", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}}
	pod := &corev1.Pod{}
	for _, tc := range []struct {
		name       string
		containers []corev1.ContainerStatus
		phase      corev1.PodPhase
		ready      corev1.ConditionStatus
	}{
		{"all running", []corev1.ContainerStatus{running}, corev1.PodRunning, corev1.ConditionTrue},
		{"one crash-looping", []corev1.ContainerStatus{running, waiting}, corev1.PodRunning, corev1.ConditionFalse},
		{"not started", []corev1.ContainerStatus{waiting}, corev1.PodPending, corev1.ConditionFalse},
		{"completed", []corev1.ContainerStatus{done}, corev1.PodSucceeded, corev1.ConditionFalse},
		{"failed", []corev1.ContainerStatus{done, failed}, corev1.PodFailed, corev1.ConditionFalse},
	} {
		s := podStatus(pod, tc.containers, nil, "10.244.1.2", "172.18.1.2")
		var ready corev1.ConditionStatus
		for _, c := range s.Conditions {
			if c.Type == corev1.PodReady {
				ready = c.Status
			}
		}
		if s.Phase != tc.phase || ready != tc.ready {
			t.Errorf("%s: phase %s ready %s, want %s %s", tc.name, s.Phase, ready, tc.phase, tc.ready)
		}
	}
	// Converged status keeps its transition times, so that nothing is rewritten.
	first := podStatus(pod, []corev1.ContainerStatus{running}, nil, "10.244.1.2", "172.18.1.2")
	pod.Status = first
	pod.Status.StartTime = &metav1.Time{Time: time.Now().Add(-time.Hour)}
	again := podStatus(pod, []corev1.ContainerStatus{running}, nil, "10.244.1.2", "172.18.1.2")
	for i := range again.Conditions {
		if !again.Conditions[i].LastTransitionTime.Equal(&first.Conditions[i].LastTransitionTime) {
			t.Errorf("condition %s moved its transition time", again.Conditions[i].Type)
		}
	}
}

func TestSeekTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{0: "", 1: "three\n", 2: "two\nthree\n", 5: "one\ntwo\nthree\n"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := seekTail(f, n); err != nil {
			t.Fatal(err)
		}
		rest := make([]byte, 64)
		k, _ := f.Read(rest)
		f.Close()
		if string(rest[:k]) != want {
			t.Errorf("tail %d = %q, want %q", n, rest[:k], want)
		}
	}
}
