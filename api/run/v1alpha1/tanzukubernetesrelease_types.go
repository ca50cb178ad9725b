package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/api/run/v1alpha3"
)

// TanzuKubernetesReleaseSpec is a release in the shape of TKG 1.x and vSphere with Tanzu: the
// Kubernetes version, its image repository and a flat list of images.
type TanzuKubernetesReleaseSpec struct {
	// Version is the release's version, unique among releases, e.g. v1.35.4+vmware.1-tkg.1.
	Version string `json:"version"`

	// KubernetesVersion is the Kubernetes version the release ships, e.g. v1.35.4+vmware.1.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// Repository is the image repository of Kubernetes' own images (kube-apiserver, …).
	// +optional
	Repository string `json:"repository,omitempty"`

	// Images are the release's other images; those named etcd, pause, coredns and kube-vip
	// are v1alpha3's spec.kubernetes.etcd, .pause, .coredns and .kube-vip.
	// +optional
	Images []ContainerImage `json:"images,omitempty"`

	// NodeImageRef points at what nodes are made from (a VirtualMachineImage on vSphere with
	// Tanzu). v1alpha3 lists OSImages instead; the reference is kept across conversions.
	// +optional
	NodeImageRef *corev1.ObjectReference `json:"nodeImageRef,omitempty"`
}

// ContainerImage is the image repository/name:tag.
type ContainerImage struct {
	// +optional
	Repository string `json:"repository,omitempty"`
	Name       string `json:"name"`
	// +optional
	Tag string `json:"tag,omitempty"`
}

// TanzuKubernetesReleaseStatus is the observed state of a release.
type TanzuKubernetesReleaseStatus struct {
	// +optional
	Conditions v1alpha3.Conditions `json:"conditions,omitempty"`
}

// TanzuKubernetesRelease is a Kubernetes release in the v1alpha1 shape, served by converting
// the stored v1alpha3 object.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=tanzukubernetesreleases,scope=Cluster,shortName=tkr
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=.spec.version
// +kubebuilder:printcolumn:name="Compatible",type=string,JSONPath=.status.conditions[?(@.type=='Compatible')].status
// +kubebuilder:printcolumn:name="Created",type="date",JSONPath=.metadata.creationTimestamp
type TanzuKubernetesRelease struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TanzuKubernetesReleaseSpec   `json:"spec,omitempty"`
	Status TanzuKubernetesReleaseStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TanzuKubernetesReleaseList is a list of TanzuKubernetesRelease.
type TanzuKubernetesReleaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TanzuKubernetesRelease `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &TanzuKubernetesRelease{}, &TanzuKubernetesReleaseList{})
}
