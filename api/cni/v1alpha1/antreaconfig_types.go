package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// AntreaConfigSpec is the configuration of a cluster's antrea package.
type AntreaConfigSpec struct {
	// Antrea holds the package configuration.
	// +optional
	Antrea Antrea `json:"antrea,omitempty,omitzero"`
}

// Antrea holds the antrea package configuration.
type Antrea struct {
	// AntreaConfigDataValue is the antrea configuration written into the data values.
	// +optional
	AntreaConfigDataValue AntreaConfigDataValue `json:"config,omitempty,omitzero"`
}

// AntreaEgress configures Egress.
type AntreaEgress struct {
	// EgressExceptCIDRs are destinations that Egress does not apply to.
	// +optional
	EgressExceptCIDRs []string `json:"exceptCIDRs,omitempty"`
}

// AntreaNodePortLocal configures NodePortLocal.
type AntreaNodePortLocal struct {
	// Enabled turns NodePortLocal on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// PortRange is the range of node ports NodePortLocal allocates from.
	// +optional
	PortRange string `json:"portRange,omitempty"`
}

// AntreaProxy configures AntreaProxy.
type AntreaProxy struct {
	// ProxyAll makes AntreaProxy handle all Service traffic, replacing kube-proxy.
	// +optional
	ProxyAll bool `json:"proxyAll,omitempty"`
	// NodePortAddresses are the addresses NodePort Services listen on.
	// +optional
	NodePortAddresses []string `json:"nodePortAddresses,omitempty"`
	// SkipServices are Services AntreaProxy ignores.
	// +optional
	SkipServices []string `json:"skipServices,omitempty"`
	// ProxyLoadBalancerIPs makes AntreaProxy handle LoadBalancer ingress IPs.
	// +optional
	ProxyLoadBalancerIPs bool `json:"proxyLoadBalancerIPs,omitempty"`
}

// AntreaFlowExporter configures the flow exporter.
type AntreaFlowExporter struct {
	// CollectorAddress is where flow records are sent.
	// +optional
	CollectorAddress string `json:"collectorAddress,omitempty"`
	// PollInterval is how often connections are polled.
	// +optional
	PollInterval string `json:"pollInterval,omitempty"`
	// ActiveFlowTimeout is the export interval of active flows.
	// +optional
	ActiveFlowTimeout string `json:"activeFlowTimeout,omitempty"`
	// IdleFlowTimeout is the export interval of idle flows.
	// +optional
	IdleFlowTimeout string `json:"idleFlowTimeout,omitempty"`
}

// AntreaWireGuard configures WireGuard encryption.
type AntreaWireGuard struct {
	// Port is the WireGuard UDP port.
	// +optional
	Port int `json:"port,omitempty"`
}

// AntreaMultiCluster configures Antrea Multi-cluster.
type AntreaMultiCluster struct {
	// Enable turns Multi-cluster on.
	// +optional
	Enable bool `json:"enable,omitempty"`
	// Namespace of the Multi-cluster controller.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// AntreaMulticast configures multicast.
type AntreaMulticast struct {
	// IGMPQueryInterval is the interval of IGMP queries.
	// +optional
	IGMPQueryInterval string `json:"igmpQueryInterval,omitempty"`
}

// AntreaIPsec configures IPsec.
type AntreaIPsec struct {
	// AuthenticationMode is psk or cert.
	// +optional
	AuthenticationMode string `json:"authenticationMode,omitempty"`
}

// AntreaIPSecCSRSigner configures the signer of IPsec certificate requests.
type AntreaIPSecCSRSigner struct {
	// AutoApprove approves requests automatically.
	// +optional
	AutoApprove bool `json:"autoApprove,omitempty"`
	// SelfSignedCA uses a self-signed CA.
	// +optional
	SelfSignedCA bool `json:"selfSignedCA,omitempty"`
}

// AntreaConfigDataValue is the antrea configuration written into the package's data values.
type AntreaConfigDataValue struct {
	// Egress configuration.
	// +optional
	Egress AntreaEgress `json:"egress,omitempty,omitzero"`

	// NodePortLocal configuration.
	// +optional
	NodePortLocal AntreaNodePortLocal `json:"nodePortLocal,omitempty,omitzero"`

	// AntreaProxy configuration.
	// +optional
	AntreaProxy AntreaProxy `json:"antreaProxy,omitempty,omitzero"`

	// AntreaFlowExporter configuration.
	// +optional
	AntreaFlowExporter AntreaFlowExporter `json:"flowExporter,omitempty,omitzero"`

	// KubeAPIServerOverride is the API server address, overriding kubeconfig and in-cluster
	// configuration.
	// +optional
	KubeAPIServerOverride string `json:"kubeAPIServerOverride,omitempty"`

	// Multicast configuration.
	// +optional
	Multicast AntreaMulticast `json:"multicast,omitempty,omitzero"`

	// IPsec configuration.
	// +optional
	IPsec AntreaIPsec `json:"ipsec,omitempty,omitzero"`

	// IPSecCSRSigner configuration.
	// +optional
	IPSecCSRSigner AntreaIPSecCSRSigner `json:"ipsecCSRSigner,omitempty,omitzero"`

	// MultiCluster configuration.
	// +optional
	MultiCluster AntreaMultiCluster `json:"multicluster,omitempty,omitzero"`

	// TransportInterface is the node interface used for tunnelling or routing.
	// +optional
	TransportInterface string `json:"transportInterface,omitempty"`

	// TransportInterfaceCIDRs are the networks of the transport interface.
	// +optional
	TransportInterfaceCIDRs []string `json:"transportInterfaceCIDRs,omitempty"`

	// MulticastInterfaces are the node interfaces that forward multicast traffic.
	// +optional
	MulticastInterfaces []string `json:"multicastInterfaces,omitempty"`

	// TunnelType is geneve, vxlan, gre or stt.
	// +optional
	TunnelType string `json:"tunnelType,omitempty"`

	// TrafficEncryptionMode is none, ipsec or wireguard.
	// +optional
	TrafficEncryptionMode string `json:"trafficEncryptionMode,omitempty"`

	// EnableUsageReporting sends usage data to VMware.
	// +optional
	// +kubebuilder:default:=false
	EnableUsageReporting bool `json:"enableUsageReporting,omitempty"`

	// WireGuard configuration.
	// +optional
	WireGuard AntreaWireGuard `json:"wireGuard,omitempty,omitzero"`

	// ServiceCIDR is the ClusterIP range of Services.
	// +optional
	ServiceCIDR string `json:"serviceCIDR,omitempty"`

	// TrafficEncapMode is encap, noEncap, hybrid or networkPolicyOnly.
	// +optional
	// +kubebuilder:validation:Enum="encap";"noEncap";"hybrid";"networkPolicyOnly"
	// +kubebuilder:default:=encap
	TrafficEncapMode string `json:"trafficEncapMode,omitempty"`

	// NoSNAT turns off SNAT of traffic from pods to the external network.
	// +optional
	// +kubebuilder:default:=false
	NoSNAT bool `json:"noSNAT,omitempty"`

	// DisableUDPTunnelOffload turns off UDP tunnel offload on the default interface.
	// +optional
	// +kubebuilder:default:=false
	DisableUDPTunnelOffload bool `json:"disableUdpTunnelOffload,omitempty"`

	// DefaultMTU is the MTU of the gateway and pod interfaces; when omitted antrea discovers the
	// MTU of the node's primary interface. TKG declares it a string, yet its own documentation
	// writes it as a number (defaultMTU: 9000); slipway accepts both.
	// +optional
	// +kubebuilder:validation:XIntOrString
	DefaultMTU *intstr.IntOrString `json:"defaultMTU,omitempty"`

	// TLSCipherSuites is a comma-separated list of allowed cipher suites.
	// +optional
	// +kubebuilder:default:="TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_RSA_WITH_AES_256_GCM_SHA384"
	TLSCipherSuites string `json:"tlsCipherSuites,omitempty"`

	// EnableBridgingMode bridges the pod network on nodes.
	// +optional
	// +kubebuilder:default:=false
	EnableBridgingMode bool `json:"enableBridgingMode,omitempty"`

	// DisableTXChecksumOffload turns off TX checksum offload of pod interfaces.
	// +optional
	// +kubebuilder:default:=false
	DisableTXChecksumOffload bool `json:"disableTXChecksumOffload,omitempty"`

	// DNSServerOverride is a DNS server address that overrides the kube-dns Service.
	// +optional
	// +kubebuilder:default:=""
	DNSServerOverride string `json:"dnsServerOverride,omitempty"`

	// FeatureGates turns antrea features on and off.
	// +optional
	FeatureGates AntreaFeatureGates `json:"featureGates,omitempty,omitzero"`
}

// AntreaFeatureGates turns antrea features on and off. The JSON names are antrea's own. Gates
// that default to true are pointers, so that a typed client can turn them off (TKG's plain bools
// drop an explicit false, which the API server then defaults back to true).
type AntreaFeatureGates struct {
	// AntreaProxy replaces kube-proxy for pod traffic.
	// +optional
	// +kubebuilder:default:=true
	AntreaProxy *bool `json:"AntreaProxy,omitempty"`
	// EndpointSlice makes AntreaProxy read EndpointSlices.
	// +optional
	// +kubebuilder:default:=false
	EndpointSlice bool `json:"EndpointSlice,omitempty"`
	// AntreaPolicy enables Antrea-native policies.
	// +optional
	// +kubebuilder:default:=true
	AntreaPolicy *bool `json:"AntreaPolicy,omitempty"`
	// FlowExporter exports flow records.
	// +optional
	// +kubebuilder:default:=false
	FlowExporter bool `json:"FlowExporter,omitempty"`
	// Egress enables SNAT IPs for pod egress traffic.
	// +optional
	// +kubebuilder:default:=true
	Egress *bool `json:"Egress,omitempty"`
	// NodePortLocal makes pods reachable through node ports.
	// +optional
	// +kubebuilder:default:=true
	NodePortLocal *bool `json:"NodePortLocal,omitempty"`
	// AntreaTraceflow enables Traceflow.
	// +optional
	// +kubebuilder:default:=true
	AntreaTraceflow *bool `json:"AntreaTraceflow,omitempty"`
	// NetworkPolicyStats collects network policy statistics.
	// +optional
	// +kubebuilder:default:=false
	NetworkPolicyStats bool `json:"NetworkPolicyStats,omitempty"`
	// AntreaIPAM enables Antrea IPAM.
	// +optional
	// +kubebuilder:default:=false
	AntreaIPAM bool `json:"AntreaIPAM,omitempty"`
	// ServiceExternalIP enables external IPs for Services.
	// +optional
	// +kubebuilder:default:=false
	ServiceExternalIP bool `json:"ServiceExternalIP,omitempty"`
	// Multicast enables multicast.
	// +optional
	// +kubebuilder:default:=false
	Multicast bool `json:"Multicast,omitempty"`
	// MultiCluster enables the Multi-cluster gateway.
	// +optional
	// +kubebuilder:default:=false
	MultiCluster bool `json:"Multicluster,omitempty"`
	// SecondaryNetwork provisions secondary pod interfaces.
	// +optional
	// +kubebuilder:default:=false
	SecondaryNetwork bool `json:"SecondaryNetwork,omitempty"`
	// TrafficControl mirrors or redirects pod traffic.
	// +optional
	// +kubebuilder:default:=false
	TrafficControl bool `json:"TrafficControl,omitempty"`
	// IPsecCertAuth enables certificate authentication for IPsec.
	// +optional
	// +kubebuilder:default:=false
	IPsecCertAuth bool `json:"IPsecCertAuth,omitempty"`
	// NodeIPAM runs the node IPAM controller in antrea.
	// +optional
	// +kubebuilder:default:=false
	NodeIPAM bool `json:"NodeIPAM,omitempty"`
}

// AntreaConfigStatus is the observed state of an AntreaConfig.
type AntreaConfigStatus struct {
	// SecretRef names the data-values Secret written from this object.
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
}

// AntreaConfig is the configuration of a cluster's antrea package.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=antreaconfigs,shortName=antreaconf,scope=Namespaced
// +kubebuilder:printcolumn:name="TrafficEncapMode",type="string",JSONPath=".spec.antrea.config.trafficEncapMode",description="The traffic encapsulation mode: encap, noEncap, hybrid or networkPolicyOnly"
// +kubebuilder:printcolumn:name="DefaultMTU",type="string",JSONPath=".spec.antrea.config.defaultMTU",description="MTU of the gateway and pod interfaces; empty means discovered"
// +kubebuilder:printcolumn:name="AntreaProxy",type="string",JSONPath=".spec.antrea.config.featureGates.AntreaProxy",description="Whether AntreaProxy is on"
// +kubebuilder:printcolumn:name="AntreaPolicy",type="string",JSONPath=".spec.antrea.config.featureGates.AntreaPolicy",description="Whether Antrea-native policies are on"
// +kubebuilder:printcolumn:name="SecretRef",type="string",JSONPath=".status.secretRef",description="Name of the antrea data values secret"
type AntreaConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AntreaConfigSpec   `json:"spec"`
	Status AntreaConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AntreaConfigList is a list of AntreaConfig.
type AntreaConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AntreaConfig `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &AntreaConfig{}, &AntreaConfigList{})
}
