// Package tkrtest builds TanzuKubernetesReleases and OSImages for tests.
package tkrtest

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
)

// OSImage returns a linux/amd64 OSImage for a Kubernetes version.
func OSImage(name, k8s, os, osVersion, imageType string) *runv1alpha3.OSImage {
	return &runv1alpha3.OSImage{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: runv1alpha3.OSImageSpec{
			KubernetesVersion: k8s,
			OS:                runv1alpha3.OSInfo{Type: "linux", Name: os, Version: osVersion, Arch: "amd64"},
			Image:             runv1alpha3.MachineImageInfo{Type: imageType, Ref: runv1alpha3.JSONObject{"version": k8s}},
		},
	}
}

// Release returns a release of a version such as v1.35.4+vmware.1-tkg.1 (Kubernetes
// v1.35.4+vmware.1), named as TKG names it, with the given OSImages.
func Release(version string, osImages ...string) *runv1alpha3.TanzuKubernetesRelease {
	t := &runv1alpha3.TanzuKubernetesRelease{
		ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(version, "+", "---"), Labels: map[string]string{}},
		Spec:       runv1alpha3.TanzuKubernetesReleaseSpec{Version: version, Kubernetes: runv1alpha3.KubernetesSpec{Version: KubernetesVersion(version)}},
	}
	for _, o := range osImages {
		t.Spec.OSImages = append(t.Spec.OSImages, corev1.LocalObjectReference{Name: o})
	}
	return t
}

// KubernetesVersion returns a release version's Kubernetes version: v1.35.4+vmware.1-tkg.1
// gives v1.35.4+vmware.1.
func KubernetesVersion(version string) string {
	return strings.SplitN(version, "-", 2)[0]
}
