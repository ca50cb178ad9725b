package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/api/run/v1alpha1"
)

// TanzuKubernetesRelease is a Kubernetes release in vSphere with Tanzu's v1alpha2 shape, whose
// fields are v1alpha1's, served by converting the stored v1alpha3 object.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=tanzukubernetesreleases,scope=Cluster,shortName=tkr
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=.spec.version
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=.status.conditions[?(@.type=='Ready')].status
// +kubebuilder:printcolumn:name="Compatible",type=string,JSONPath=.status.conditions[?(@.type=='Compatible')].status
// +kubebuilder:printcolumn:name="Created",type="date",JSONPath=.metadata.creationTimestamp
type TanzuKubernetesRelease struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   v1alpha1.TanzuKubernetesReleaseSpec   `json:"spec,omitempty"`
	Status v1alpha1.TanzuKubernetesReleaseStatus `json:"status,omitempty"`
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
