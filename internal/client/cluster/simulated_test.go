package cluster

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestWorkloadOf names a simulated pod's workload as a user finds it with kubectl.
func TestWorkloadOf(t *testing.T) {
	controller := func(kind, name string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{Kind: kind, Name: name, Controller: ptr.To(true)}}
	}
	for _, tc := range []struct {
		pod  corev1.Pod
		want string
	}{
		{corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "calico-node-x7k2p", OwnerReferences: controller("DaemonSet", "calico-node")}}, "kube-system/calico-node"},
		{corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "antrea-controller-5d9c8f7b6-abcde", Labels: map[string]string{"pod-template-hash": "5d9c8f7b6"},
			OwnerReferences: controller("ReplicaSet", "antrea-controller-5d9c8f7b6")}}, "kube-system/antrea-controller"},
		{corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "lonely"}}, "default/lonely"},
	} {
		if got := workloadOf(&tc.pod); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.pod.Name, got, tc.want)
		}
	}
}

// TestSimulated tells a simulated pod from a real one: a stand-in image, relocated or not.
func TestSimulated(t *testing.T) {
	pod := func(annotations map[string]string, images ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
		for _, i := range images {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Image: i})
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"a stand-in image", pod(nil, "projects.registry.vmware.com/tkg/calico-all/calico-node:v3.26.3_vmware.2"), true},
		{"a relocated stand-in, second container", pod(nil, "registry.example.com/tkg/metrics-server:v0.7.2_vmware.1",
			"registry.example.com/tkg/pinniped:v0.25.0_vmware.1@sha256:0123"), true},
		{"a stand-in locked by digest, as a package names it", pod(nil, "127.0.0.1:5000/tkg/calico-all/calico-node@sha256:0123"), true},
		{"a built image", pod(nil, "projects.registry.vmware.com/tkg/metrics-server:v0.7.2_vmware.1"), false},
		{"a built image locked by digest", pod(nil, "projects.registry.vmware.com/tkg/metrics-server@sha256:0123"), false},
		{"a stand-in's name at another tag", pod(nil, "projects.registry.vmware.com/tkg/calico-all/calico-node:v3.99.0"), false},
		{"a name that only ends like one", pod(nil, "example.com/my-calico-all/calico-node:v3.26.3_vmware.2"), false},
		{"a stand-in copied into one repository, told by its digest", pod(nil, "127.0.0.1:5001/tkg/slipway-repo@sha256:abcd"), true},
		{"a built image copied into one repository", pod(nil, "127.0.0.1:5001/tkg/slipway-repo@sha256:0123"), false},
	} {
		if got := simulated(tc.pod, map[string]bool{"sha256:abcd": true}); got != tc.want {
			t.Errorf("%s: simulated %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPrintSimulated: cluster get lists the workloads that run stand-ins, says when the
// cluster did not answer, and prints nothing when none is simulated.
func TestPrintSimulated(t *testing.T) {
	var out strings.Builder
	PrintSimulated(&out, []string{"kube-system/antrea-agent", "kube-system/antrea-controller"}, nil)
	if want := "\n\nSimulated on this host (stand-in images that do none of their work):\n\n  kube-system/antrea-agent\n  kube-system/antrea-controller\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	out.Reset()
	PrintSimulated(&out, nil, errors.New("context deadline exceeded"))
	if !strings.Contains(out.String(), "Simulated workloads: not known, the cluster did not answer: context deadline exceeded") {
		t.Errorf("a cluster that did not answer: %q", out.String())
	}
	out.Reset()
	PrintSimulated(&out, []string{}, nil)
	if out.String() != "" {
		t.Errorf("none simulated: %q", out.String())
	}
}
