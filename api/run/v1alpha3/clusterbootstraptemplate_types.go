package v1alpha3

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations of the addons manager on Clusters and ClusterBootstraps.
const (
	// AnnotationCustomClusterBootstrap on a Cluster says the user provides its ClusterBootstrap;
	// the addons manager waits for it instead of cloning the template.
	AnnotationCustomClusterBootstrap = "tkg.tanzu.vmware.com/custom-clusterbootstrap"
	// AnnotationAddMissingFieldsFromTKR on a ClusterBootstrap names the release whose template
	// fills in what the object leaves out.
	AnnotationAddMissingFieldsFromTKR = "tkg.tanzu.vmware.com/add-missing-fields-from-tkr"
	// AnnotationUnmanagedCNI on a ClusterBootstrap says the cluster's CNI is the user's (CNI:
	// none): its spec names none, and none is added from the release.
	AnnotationUnmanagedCNI = "tkg.tanzu.vmware.com/unmanaged-cni"
)

// ClusterBootstrapTemplateSpec lists the packages a cluster is bootstrapped with and where their
// values come from. ClusterBootstrap shares it.
type ClusterBootstrapTemplateSpec struct {
	// Paused stops controllers from acting on the object and what it refers to.
	// +optional
	// +kubebuilder:default:=false
	Paused bool `json:"paused,omitempty"`

	// CNI is the container network package, such as antrea or calico.
	// +optional
	CNI *ClusterBootstrapPackage `json:"cni,omitempty"`
	// CSI is the storage package.
	// +optional
	CSI *ClusterBootstrapPackage `json:"csi,omitempty"`
	// CPI is the cloud provider package.
	// +optional
	CPI *ClusterBootstrapPackage `json:"cpi,omitempty"`
	// Kapp is the package controller package.
	// +optional
	Kapp *ClusterBootstrapPackage `json:"kapp,omitempty"`
	// AdditionalPackages are installed after the core packages.
	// +optional
	AdditionalPackages []*ClusterBootstrapPackage `json:"additionalPackages,omitempty"`
}

// ClusterBootstrapPackage is one package and the source of its values.
type ClusterBootstrapPackage struct {
	// RefName is the name of the Package object: the package's refName followed by its version.
	RefName string `json:"refName"`
	// ValuesFrom says where the package's values come from.
	// +optional
	ValuesFrom *ValuesFrom `json:"valuesFrom,omitempty"`
}

// ValuesFrom is the source of a package's values: exactly one of inline values, a Secret in the
// cluster's namespace, or a provider object whose controller writes a Secret and names it in
// its status.secretRef.
type ValuesFrom struct {
	// Inline values.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Inline JSONObject `json:"inline,omitempty"`
	// SecretRef names a Secret in the same namespace that holds the values.
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
	// ProviderRef names a provider object, such as an AntreaConfig, in the same namespace.
	// +optional
	ProviderRef *corev1.TypedLocalObjectReference `json:"providerRef,omitempty"`
}

// ClusterBootstrapTemplate is the package set of one release, kept in the system namespace and
// cloned into a ClusterBootstrap for each cluster on that release.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterbootstraptemplates,shortName=cbt,scope=Namespaced
// +kubebuilder:printcolumn:name="CNI",type="string",JSONPath=".spec.cni.refName",description="CNI package name and version"
// +kubebuilder:printcolumn:name="CSI",type="string",JSONPath=".spec.csi.refName",description="CSI package name and version"
// +kubebuilder:printcolumn:name="CPI",type="string",JSONPath=".spec.cpi.refName",description="CPI package name and version"
// +kubebuilder:printcolumn:name="Kapp",type="string",JSONPath=".spec.kapp.refName",description="Kapp package name and version"
// +kubebuilder:printcolumn:name="Additional Packages",type="string",JSONPath=".spec.additionalPackages[*].refName",description="Additional packages",priority=10
type ClusterBootstrapTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec *ClusterBootstrapTemplateSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ClusterBootstrapTemplateList is a list of ClusterBootstrapTemplate.
type ClusterBootstrapTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterBootstrapTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ClusterBootstrapTemplate{}, &ClusterBootstrapTemplateList{})
}
