package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Modes of the vSphere storage driver.
const (
	// ModeVSphereCSI runs the storage driver against a vCenter.
	ModeVSphereCSI = "vsphereCSI"
	// ModeVSphereParavirtualCSI runs the paravirtual storage driver of vSphere with Tanzu.
	ModeVSphereParavirtualCSI = "vsphereParavirtualCSI"
)

// VSphereCSIConfigSpec is the configuration of a cluster's vsphere-csi package.
type VSphereCSIConfigSpec struct {
	// VSphereCSI holds the package configuration.
	VSphereCSI VSphereCSI `json:"vsphereCSI"`
}

// VSphereCSI is the storage driver configuration.
type VSphereCSI struct {
	// Mode is vsphereCSI or vsphereParavirtualCSI.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Enum=vsphereCSI;vsphereParavirtualCSI
	Mode string `json:"mode"`

	// NonParavirtualConfig configures the driver against a vCenter.
	// +optional
	*NonParavirtualConfig `json:"config,omitempty"`
}

// NonParavirtualConfig configures the storage driver against a vCenter.
type NonParavirtualConfig struct {
	// TLSThumbprint is the thumbprint of the vCenter certificate.
	// +optional
	TLSThumbprint string `json:"tlsThumbprint,omitempty"`
	// Namespace the driver's components are deployed in.
	// +optional
	Namespace string `json:"namespace"`
	// ClusterName is the name of the cluster in vCenter's storage view.
	// +optional
	ClusterName string `json:"clusterName"`
	// Server is the address of the vCenter.
	// +optional
	Server string `json:"server"`
	// Datacenter the cluster's VMs are in.
	// +optional
	Datacenter string `json:"datacenter"`
	// PublicNetwork is the VM network of the nodes.
	// +optional
	PublicNetwork string `json:"publicNetwork"`
	// VSphereCredentialLocalObjRef names a Secret with the vSphere username and password.
	// +optional
	VSphereCredentialLocalObjRef *corev1.TypedLocalObjectReference `json:"vSphereCredentialLocalObjRef"`
	// Region is the region of vSphere's multi-AZ feature.
	// +optional
	Region string `json:"region,omitempty"`
	// Zone is the zone of vSphere's multi-AZ feature.
	// +optional
	Zone string `json:"zone,omitempty"`
	// InsecureFlag turns off verification of the vCenter certificate.
	// +optional
	InsecureFlag *bool `json:"insecureFlag,omitempty"`
	// UseTopologyCategories uses vSphere tag categories for topology.
	// +optional
	UseTopologyCategories *bool `json:"useTopologyCategories,omitempty"`
	// ProvisionTimeout of the provisioner sidecar.
	// +optional
	ProvisionTimeout string `json:"provisionTimeout,omitempty"`
	// AttachTimeout of the attacher sidecar.
	// +optional
	AttachTimeout string `json:"attachTimeout,omitempty"`
	// ResizerTimeout of the resizer sidecar.
	// +optional
	ResizerTimeout string `json:"resizerTimeout,omitempty"`
	// VSphereVersion is the vSphere version the driver runs against.
	// +optional
	VSphereVersion string `json:"vSphereVersion,omitempty"`
	// HTTPProxy is the proxy for HTTP requests.
	// +optional
	HTTPProxy string `json:"httpProxy,omitempty"`
	// HTTPSProxy is the proxy for HTTPS requests.
	// +optional
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	// NoProxy is a comma-separated list of hosts reached without the proxy.
	// +optional
	NoProxy string `json:"noProxy,omitempty"`
	// DeploymentReplicas is the number of controller replicas.
	// +optional
	DeploymentReplicas *int32 `json:"deploymentReplicas,omitempty"`
	// WindowsSupport deploys the node plugin on Windows nodes.
	// +optional
	WindowsSupport *bool `json:"windowsSupport,omitempty"`
	// NetPermissions restrict the network access to file share volumes, by name.
	// +optional
	NetPermissions map[string]*NetPermissionConfig `json:"netPermissions,omitempty"`
}

// NetPermissionConfig restricts network access to file share volumes.
type NetPermissionConfig struct {
	// Ips is a client address, range or subnet; "*" when empty.
	// +optional
	Ips string `json:"ips,omitempty"`
	// Permissions is READ_ONLY, READ_WRITE or NO_ACCESS; READ_WRITE when empty.
	// +optional
	Permissions string `json:"permissions,omitempty"`
	// RootSquash denies root access from these clients.
	// +optional
	RootSquash bool `json:"rootsquash,omitempty"`
}

// VSphereCSIConfigStatus is the observed state of a VSphereCSIConfig.
type VSphereCSIConfigStatus struct {
	// SecretRef names the data-values Secret written from this object.
	// +optional
	SecretRef *string `json:"secretRef,omitempty"`
}

// VSphereCSIConfig is the configuration of a cluster's vsphere-csi package.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=vspherecsiconfigs,shortName=vcsic,scope=Namespaced
// +kubebuilder:printcolumn:name="Mode",type="string",JSONPath=".spec.vsphereCSI.mode",description="vsphereCSI or vsphereParavirtualCSI"
// +kubebuilder:printcolumn:name="SecretRef",type="string",JSONPath=".status.secretRef",description="Name of the vsphere-csi data values secret"
type VSphereCSIConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VSphereCSIConfigSpec   `json:"spec,omitempty"`
	Status VSphereCSIConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// VSphereCSIConfigList is a list of VSphereCSIConfig.
type VSphereCSIConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VSphereCSIConfig `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &VSphereCSIConfig{}, &VSphereCSIConfigList{})
}
