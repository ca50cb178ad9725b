package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Modes of the vSphere cloud provider.
const (
	// ModeVSphereCPI runs the cloud provider against a vCenter.
	ModeVSphereCPI = "vsphereCPI"
	// ModeVSphereParavirtualCPI runs the paravirtual cloud provider of vSphere with Tanzu.
	ModeVSphereParavirtualCPI = "vsphereParavirtualCPI"
)

// VSphereCPIConfigSpec is the configuration of a cluster's vsphere-cpi package.
type VSphereCPIConfigSpec struct {
	// VSphereCPI holds the package configuration.
	VSphereCPI VSphereCPI `json:"vsphereCPI"`
}

// NSXTRouteConfig configures NSX-T routes.
type NSXTRouteConfig struct {
	// RouterPath is the path of the NSX-T T0 or T1 logical router.
	// +optional
	RouterPath *string `json:"routerPath,omitempty"`
}

// VMNetwork names the VM networks whose addresses nodes report.
type VMNetwork struct {
	// Internal is the internal VM network.
	// +optional
	Internal *string `json:"internal,omitempty"`
	// External is the external VM network.
	// +optional
	External *string `json:"external,omitempty"`
	// ExcludeInternalSubnetCidr is an internal network range to leave out.
	// +optional
	ExcludeInternalSubnetCidr *string `json:"excludeInternalSubnetCidr,omitempty"`
	// ExcludeExternalSubnetCidr is an external network range to leave out.
	// +optional
	ExcludeExternalSubnetCidr *string `json:"excludeExternalSubnetCidr,omitempty"`
}

// NSXT configures the cloud provider's NSX-T integration.
type NSXT struct {
	// PodRoutingEnabled routes pod traffic through NSX-T.
	// +optional
	// +kubebuilder:default:=false
	PodRoutingEnabled *bool `json:"podRoutingEnabled,omitempty"`
	// Route configures NSX-T routes.
	// +optional
	Route *NSXTRouteConfig `json:"route,omitempty"`
	// CredentialLocalObjRef names a Secret with the NSX-T username and password.
	// +optional
	CredentialLocalObjRef *corev1.TypedLocalObjectReference `json:"credentialLocalObjRef,omitempty"`
	// APIHost is the NSX-T server.
	// +optional
	APIHost *string `json:"apiHost,omitempty"`
	// Insecure accepts a self-signed NSX-T certificate.
	// +optional
	Insecure *bool `json:"insecure,omitempty"`
	// RemoteAuth authenticates through vIDM.
	// +optional
	RemoteAuth *bool `json:"remoteAuth,omitempty"`
	// VMCAccessToken is the VMC access token.
	// +optional
	VMCAccessToken *string `json:"vmcAccessToken,omitempty"`
	// VMCAuthHost is the VMC host that verifies the token.
	// +optional
	VMCAuthHost *string `json:"vmcAuthHost,omitempty"`
	// ClientCertKeyData is the key of the NSX-T client certificate.
	// +optional
	ClientCertKeyData *string `json:"clientCertKeyData,omitempty"`
	// ClientCertData is the NSX-T client certificate.
	// +optional
	ClientCertData *string `json:"clientCertData,omitempty"`
	// RootCAData is the CA of a locally signed NSX-T server certificate.
	// +optional
	RootCAData *string `json:"rootCAData,omitempty"`
}

// NonParavirtualConfig configures the cloud provider against a vCenter.
type NonParavirtualConfig struct {
	// VCenterAPIEndpoint is the address of the vCenter.
	// +optional
	VCenterAPIEndpoint *string `json:"vCenterAPIEndpoint,omitempty"`
	// Datacenter the cluster's VMs are in.
	// +optional
	Datacenter *string `json:"datacenter,omitempty"`
	// VSphereCredentialLocalObjRef names a Secret with the vSphere username and password.
	// +optional
	VSphereCredentialLocalObjRef *corev1.TypedLocalObjectReference `json:"vSphereCredentialLocalObjRef,omitempty"`
	// TLSThumbprint is the thumbprint of the vCenter certificate.
	// +optional
	TLSThumbprint *string `json:"tlsThumbprint,omitempty"`
	// Region is the region of vSphere's multi-AZ feature.
	// +optional
	Region *string `json:"region,omitempty"`
	// Zone is the zone of vSphere's multi-AZ feature.
	// +optional
	Zone *string `json:"zone,omitempty"`
	// Insecure turns off verification of the vCenter certificate.
	// +optional
	Insecure *bool `json:"insecure,omitempty"`
	// IPFamily is ipv4, ipv6, "ipv4,ipv6" or "ipv6,ipv4".
	// +optional
	// +kubebuilder:validation:Enum="ipv4";"ipv6";"ipv4,ipv6";"ipv6,ipv4"
	IPFamily *string `json:"ipFamily,omitempty"`
	// VMNetwork names the VM networks whose addresses nodes report.
	// +optional
	VMNetwork *VMNetwork `json:"vmNetwork,omitempty"`
	// TLSCipherSuites is a comma-separated list of allowed cipher suites.
	// +optional
	// +kubebuilder:default:="TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
	TLSCipherSuites *string `json:"tlsCipherSuites,omitempty"`
	// NSXT configures the NSX-T integration.
	// +optional
	NSXT *NSXT `json:"nsxt,omitempty"`
	// Proxy configures the HTTP proxy.
	// +optional
	Proxy *Proxy `json:"proxy,omitempty"`
}

// ParavirtualConfig configures the paravirtual cloud provider.
type ParavirtualConfig struct {
	// AntreaNSXPodRoutingEnabled routes pod traffic through Antrea NSX.
	// +optional
	// +kubebuilder:default:=false
	AntreaNSXPodRoutingEnabled *bool `json:"antreaNSXPodRoutingEnabled,omitempty"`
}

// Proxy configures the HTTP proxy of the cloud provider.
type Proxy struct {
	// HTTPProxy is the proxy for HTTP requests.
	// +optional
	HTTPProxy *string `json:"http_proxy,omitempty"`
	// HTTPSProxy is the proxy for HTTPS requests.
	// +optional
	HTTPSProxy *string `json:"https_proxy,omitempty"`
	// NoProxy is a comma-separated list of hosts reached without the proxy.
	// +optional
	NoProxy *string `json:"no_proxy,omitempty"`
}

// VSphereCPI is the cloud provider configuration; the fields of both modes sit side by side.
type VSphereCPI struct {
	// Mode is vsphereCPI or vsphereParavirtualCPI.
	// +optional
	// +kubebuilder:validation:Enum=vsphereCPI;vsphereParavirtualCPI
	Mode *string `json:"mode,omitempty"`

	*NonParavirtualConfig `json:",omitempty"`

	*ParavirtualConfig `json:",omitempty"`
}

// VSphereCPIConfigStatus is the observed state of a VSphereCPIConfig.
type VSphereCPIConfigStatus struct {
	// SecretRef names the data-values Secret written from this object.
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
}

// VSphereCPIConfig is the configuration of a cluster's vsphere-cpi package.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=vspherecpiconfigs,shortName=vcpic,scope=Namespaced
// +kubebuilder:printcolumn:name="Mode",type="string",JSONPath=".spec.vsphereCPI.mode",description="vsphereCPI or vsphereParavirtualCPI"
// +kubebuilder:printcolumn:name="SecretRef",type="string",JSONPath=".status.secretRef",description="Name of the vsphere-cpi data values secret"
type VSphereCPIConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VSphereCPIConfigSpec   `json:"spec,omitempty"`
	Status VSphereCPIConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// VSphereCPIConfigList is a list of VSphereCPIConfig.
type VSphereCPIConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VSphereCPIConfig `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &VSphereCPIConfig{}, &VSphereCPIConfigList{})
}
