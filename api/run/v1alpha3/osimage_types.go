package v1alpha3

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OSInfo is the operating system of an OSImage: its type, name, version and CPU architecture.
type OSInfo struct {
	// Type is the operating system family, such as linux.
	Type string `json:"type"`
	// Name is the distribution, such as ubuntu or photon.
	Name string `json:"name"`
	// Version is the distribution's version, such as 20.04.
	Version string `json:"version"`
	// Arch is the CPU architecture, such as amd64.
	Arch string `json:"arch"`
}

// MachineImageInfo says where the image lives for one kind of infrastructure.
type MachineImageInfo struct {
	// Type is the kind of image, roughly the infrastructure provider: ova, ami, azure, docker,
	// vmop, or local for slipway's local runtime.
	Type string `json:"type"`

	// Ref identifies the image within its infrastructure; it is what the infrastructure machine
	// templates are given.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Ref JSONObject `json:"ref"`
}

// OSImageSpec is what an OSImage is.
type OSImageSpec struct {
	// KubernetesVersion is the Kubernetes build installed in the image.
	KubernetesVersion string `json:"kubernetesVersion"`

	// OS is the operating system of the image.
	OS OSInfo `json:"os"`

	// Image says where the image lives.
	Image MachineImageInfo `json:"image"`
}

// OSImageStatus is the observed state of an OSImage.
type OSImageStatus struct {
	// Conditions are Ready and Compatible.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
}

// OSImage is a machine image shipped with a release: an operating system with a Kubernetes
// build, as an OVA, AMI or, for the local runtime, its node image. Read-only to users.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=osimages,scope=Cluster,shortName=osimg;osimage
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="K8S Version",type=string,JSONPath=.spec.kubernetesVersion
// +kubebuilder:printcolumn:name="OS Name",type=string,JSONPath=.spec.os.name
// +kubebuilder:printcolumn:name="OS Version",type=string,JSONPath=.spec.os.version
// +kubebuilder:printcolumn:name="Arch",type=string,JSONPath=.spec.os.arch
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=.spec.image.type
// +kubebuilder:printcolumn:name="Compatible",type=string,JSONPath=.status.conditions[?(@.type=='Compatible')].status
// +kubebuilder:printcolumn:name="Created",type="date",JSONPath=.metadata.creationTimestamp
type OSImage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OSImageSpec   `json:"spec,omitempty"`
	Status OSImageStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// OSImageList is a list of OSImage.
type OSImageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OSImage `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &OSImage{}, &OSImageList{})
}
