package v1alpha3

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types, reasons, labels and annotations of the TKR service.
const (
	// ConditionCompatible is True when the release is compatible with the management cluster's
	// TKG version.
	ConditionCompatible = "Compatible"
	// ConditionValid is True when the release and everything it refers to are well formed.
	ConditionValid = "Valid"
	// ConditionReady is True when the release can be used to create clusters.
	ConditionReady = "Ready"
	// ConditionUpdatesAvailable on a Cluster lists newer compatible releases.
	ConditionUpdatesAvailable = "UpdatesAvailable"

	// ReasonTKRNotFound says that no release matched what a Cluster asked for.
	ReasonTKRNotFound = "TKRNotFound"
	// ReasonAlreadyUpToDate says that a Cluster runs the newest compatible release.
	ReasonAlreadyUpToDate = "AlreadyUpToDate"

	// LabelIncompatible marks a release that is not compatible with the management cluster.
	LabelIncompatible = "incompatible"
	// LabelDeactivated marks a release an administrator deactivated.
	LabelDeactivated = "deactivated"
	// LabelInvalid marks a release that is not valid.
	LabelInvalid = "invalid"

	// AnnotationResolveTKR on a Cluster or ClusterClass asks the resolver to pick a release;
	// its value is a label selector the release must match.
	AnnotationResolveTKR = "run.tanzu.vmware.com/resolve-tkr"
	// AnnotationResolveOSImage holds the label selector an OSImage must match.
	AnnotationResolveOSImage = "run.tanzu.vmware.com/resolve-os-image"

	// LabelTKR on a Cluster names the release it was resolved to.
	LabelTKR = "run.tanzu.vmware.com/tkr"
	// LabelOSImage on a machine template names the OSImage it was resolved to.
	LabelOSImage = "run.tanzu.vmware.com/os-image"
	// LabelLegacyTKR marks a release that predates ClusterClass-based clusters.
	LabelLegacyTKR = "run.tanzu.vmware.com/legacy-tkr"
)

// TanzuKubernetesReleaseSpec is what a Kubernetes release ships.
type TanzuKubernetesReleaseSpec struct {
	// Version is the semantic version of the release, unique among all releases.
	Version string `json:"version"`

	// Kubernetes describes the Kubernetes build the release ships.
	Kubernetes KubernetesSpec `json:"kubernetes"`

	// OSImages names the OSImage objects shipped with the release.
	// +optional
	OSImages []corev1.LocalObjectReference `json:"osImages,omitempty"`

	// BootstrapPackages names the Package objects (in the system namespace) of the add-ons a
	// cluster on this release is bootstrapped with.
	// +optional
	BootstrapPackages []corev1.LocalObjectReference `json:"bootstrapPackages,omitempty"`
}

// KubernetesSpec describes the Kubernetes build a release ships and where its images come from.
type KubernetesSpec struct {
	// Version is the semantic version of the Kubernetes build. Several releases may ship the same
	// build.
	Version string `json:"version"`

	// ImageRepository is the container registry the Kubernetes images are pulled from.
	// +optional
	ImageRepository string `json:"imageRepository,omitempty"`

	// Etcd is the etcd image.
	// +optional
	Etcd *ContainerImageInfo `json:"etcd,omitempty"`

	// Pause is the pause image.
	// +optional
	Pause *ContainerImageInfo `json:"pause,omitempty"`

	// CoreDNS is the CoreDNS image.
	// +optional
	CoreDNS *ContainerImageInfo `json:"coredns,omitempty"`

	// KubeVIP is the kube-vip image.
	// +optional
	KubeVIP *ContainerImageInfo `json:"kube-vip,omitempty"`
}

// ContainerImageInfo names an image that does not come from the Kubernetes release process.
type ContainerImageInfo struct {
	// ImageRepository is the registry of the image; empty means the release's ImageRepository.
	// +optional
	ImageRepository string `json:"imageRepository,omitempty"`

	// ImageTag is the tag of the image.
	// +optional
	ImageTag string `json:"imageTag,omitempty"`
}

// TanzuKubernetesReleaseStatus is the observed state of a release.
type TanzuKubernetesReleaseStatus struct {
	// Conditions are Ready, Compatible and Valid.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
}

// TanzuKubernetesRelease (TKR) is a Kubernetes release that clusters can be created from: a
// Kubernetes version, the OS images that run it and the add-on packages a cluster starts with.
// Releases are created by the TKR service from the catalogue and are read-only to users.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=tanzukubernetesreleases,scope=Cluster,shortName=tkr
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=.spec.version
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=.status.conditions[?(@.type=='Ready')].status
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
