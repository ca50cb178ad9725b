package v1alpha1

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/api/run/v1alpha3"
)

func hubRelease() *v1alpha3.TanzuKubernetesRelease {
	return &v1alpha3.TanzuKubernetesRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "v1.35.4---vmware.1-tkg.1", Labels: map[string]string{"v1.35": ""}},
		Spec: v1alpha3.TanzuKubernetesReleaseSpec{
			Version: "v1.35.4+vmware.1-tkg.1",
			Kubernetes: v1alpha3.KubernetesSpec{
				Version:         "v1.35.4+vmware.1",
				ImageRepository: "projects.registry.vmware.com/tkg",
				Etcd:            &v1alpha3.ContainerImageInfo{ImageTag: "v3.6.5_vmware.1"},
				CoreDNS:         &v1alpha3.ContainerImageInfo{ImageRepository: "other.example.com/dns", ImageTag: "v1.12.1_vmware.1"},
				Pause:           &v1alpha3.ContainerImageInfo{ImageTag: "3.10"},
			},
			OSImages:          []corev1.LocalObjectReference{{Name: "v1.35.4---vmware.1-tkg.1-ubuntu"}},
			BootstrapPackages: []corev1.LocalObjectReference{{Name: "antrea.tanzu.vmware.com.1.13.1--vmware.1-tkg.1"}},
		},
		Status: v1alpha3.TanzuKubernetesReleaseStatus{Conditions: v1alpha3.Conditions{{Type: "Ready", Status: corev1.ConditionTrue}}},
	}
}

// TestHubRoundTrip converts a stored release to v1alpha1 and back: nothing of v1alpha3 is lost,
// and the v1alpha1 shape has its images by name.
func TestHubRoundTrip(t *testing.T) {
	hub := hubRelease()
	spoke := &TanzuKubernetesRelease{}
	if err := spoke.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	if spoke.Spec.KubernetesVersion != "v1.35.4+vmware.1" || spoke.Spec.Repository != "projects.registry.vmware.com/tkg" {
		t.Errorf("v1alpha1 spec %+v", spoke.Spec)
	}
	want := []ContainerImage{{Name: "etcd", Tag: "v3.6.5_vmware.1"}, {Name: "coredns", Repository: "other.example.com/dns", Tag: "v1.12.1_vmware.1"}, {Name: "pause", Tag: "3.10"}}
	if !reflect.DeepEqual(spoke.Spec.Images, want) {
		t.Errorf("images %+v, want %+v", spoke.Spec.Images, want)
	}
	if spoke.Annotations[ConversionDataAnnotation] == "" || spoke.Status.Conditions[0].Type != "Ready" {
		t.Errorf("v1alpha1 object lacks the conversion data or the conditions: %+v", spoke.ObjectMeta)
	}
	back := &v1alpha3.TanzuKubernetesRelease{}
	if err := spoke.ConvertTo(back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Spec, hub.Spec) || !reflect.DeepEqual(back.Status, hub.Status) {
		t.Errorf("round trip changed the release:\n got %+v\nwant %+v", back.Spec, hub.Spec)
	}
}

// TestSpokeRoundTrip writes a release as v1alpha1 with what v1alpha3 has no field for and
// reads it back: the node image reference and the extra image are kept.
func TestSpokeRoundTrip(t *testing.T) {
	spoke := &TanzuKubernetesRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "v1.21.2---vmware.1-tkg.1"},
		Spec: TanzuKubernetesReleaseSpec{
			Version: "v1.21.2+vmware.1-tkg.1", KubernetesVersion: "v1.21.2+vmware.1", Repository: "vmware.io",
			Images: []ContainerImage{
				{Name: "metrics-server", Repository: "vmware.io", Tag: "v0.4.0"},
				{Name: "etcd", Repository: "vmware.io", Tag: "v3.4.13"},
				{Name: "kube-vip", Repository: "vmware.io", Tag: "v0.3.3"},
			},
			NodeImageRef: &corev1.ObjectReference{APIVersion: "vmoperator.vmware.com/v1alpha1", Kind: "VirtualMachineImage", Name: "ob-1"},
		},
	}
	hub := &v1alpha3.TanzuKubernetesRelease{}
	if err := spoke.ConvertTo(hub); err != nil {
		t.Fatal(err)
	}
	if hub.Spec.Kubernetes.Etcd.ImageTag != "v3.4.13" || hub.Spec.Kubernetes.KubeVIP.ImageTag != "v0.3.3" || hub.Spec.Kubernetes.Version != "v1.21.2+vmware.1" {
		t.Errorf("v1alpha3 spec %+v", hub.Spec.Kubernetes)
	}
	back := &TanzuKubernetesRelease{}
	if err := back.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Spec.NodeImageRef, spoke.Spec.NodeImageRef) {
		t.Errorf("node image reference %+v, want %+v", back.Spec.NodeImageRef, spoke.Spec.NodeImageRef)
	}
	names := map[string]ContainerImage{}
	for _, i := range back.Spec.Images {
		names[i.Name] = i
	}
	for _, i := range spoke.Spec.Images {
		if names[i.Name] != i {
			t.Errorf("image %s came back as %+v", i.Name, names[i.Name])
		}
	}
	if len(back.Spec.Images) != len(spoke.Spec.Images) {
		t.Errorf("images %+v, want %+v", back.Spec.Images, spoke.Spec.Images)
	}
}

// TestCorruptConversionData names the annotation and the release.
func TestCorruptConversionData(t *testing.T) {
	spoke := &TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: "r", Annotations: map[string]string{ConversionDataAnnotation: "{"}}}
	err := spoke.ConvertTo(&v1alpha3.TanzuKubernetesRelease{})
	if err == nil || !strings.Contains(err.Error(), ConversionDataAnnotation) || !strings.Contains(err.Error(), "release r") {
		t.Fatalf("error %v, want one naming the annotation and the release", err)
	}
}
