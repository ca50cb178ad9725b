package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// ProviderIDPrefix starts the providerID of every local machine: local://<namespace>/<machine>.
const ProviderIDPrefix = "local://"

// Conditions of local infrastructure objects.
const (
	// ReadyCondition is true when a LocalCluster's endpoint is allocated, or when a LocalMachine's
	// node runs.
	ReadyCondition = clusterv1.ReadyCondition
	// NodeStartedCondition is a LocalMachine's node: false while it waits for bootstrap data or
	// starts, true once its init process runs.
	NodeStartedCondition = "NodeStarted"
)

// Reasons of the conditions.
const (
	ReasonEndpointAllocated       = "EndpointAllocated"
	ReasonWaitingForBootstrapData = "WaitingForBootstrapData"
	ReasonWaitingForClusterReady  = "WaitingForClusterInfrastructure"
	ReasonNodeStarted             = "NodeStarted"
	ReasonNodeStartFailed         = "NodeStartFailed"
	// ReasonHostLimitReached says the host cannot start another node: the message names the
	// limit, its value, the need and how to raise it.
	ReasonHostLimitReached = "HostLimitReached"
	// ReasonHostLimitRaised is the Event of a host limit slipway raised to start a node.
	ReasonHostLimitRaised = "HostLimitRaised"
	ReasonDeleting        = "Deleting"
)

// ClusterUIDAnnotation, on a Cluster API Cluster, is the UID the Cluster had when the local
// provider made its local cluster. clusterctl move gives every object a new UID but keeps
// annotations: the local cluster belongs to the Cluster carrying the UID it was made for,
// whichever management cluster holds it now.
const ClusterUIDAnnotation = "local.infrastructure.cluster.x-k8s.io/cluster-uid"

// Finalizers.
const (
	// ClusterFinalizer releases a LocalCluster's endpoint and load balancer.
	ClusterFinalizer = "localcluster.infrastructure.cluster.x-k8s.io"
	// MachineFinalizer stops a LocalMachine's node.
	MachineFinalizer = "localmachine.infrastructure.cluster.x-k8s.io"
)

// LocalClusterSpec is the desired state of a LocalCluster.
type LocalClusterSpec struct {
	// controlPlaneEndpoint is where the cluster's API server is reached. Left empty, the provider
	// allocates an address of its own on the local runtime's bridge (198.18.<index>.1:6443) with a
	// load balancer in front of the control-plane nodes.
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`
	// hostRegistries are registries on the host's IPv4 loopback (an address of 127.0.0.0/8, or
	// localhost, with its port) that the nodes pull from besides the local registry, each reached
	// on the same port of the host's bridge address, where it must listen too: the copy of TKG's
	// images that TKG_CUSTOM_IMAGE_REPOSITORY names. The local ClusterClass sets it from the
	// Cluster's imageRepository variable. Nodes made after a change pull from the new list.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:items:Pattern=`^(127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}|localhost):[0-9]{1,5}$`
	HostRegistries []string `json:"hostRegistries,omitempty"`
}

// LocalClusterInitializationStatus reports the cluster infrastructure's initialization.
type LocalClusterInitializationStatus struct {
	// provisioned is true once the control-plane endpoint is allocated and its load balancer runs.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// LocalClusterStatus is the observed state of a LocalCluster.
type LocalClusterStatus struct {
	// initialization reports the Cluster API contract's initialization.
	// +optional
	Initialization LocalClusterInitializationStatus `json:"initialization,omitempty,omitzero"`
	// conditions of the LocalCluster: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// index is the bridge block 198.18.<index>.0/24 the cluster's nodes take.
	// +optional
	Index int32 `json:"index,omitempty"`
	// loadBalancerRestarts counts how often the provider found the cluster's load balancer
	// not running and started it again (each time with a LoadBalancerRestarted Event).
	// +optional
	LoadBalancerRestarts int32 `json:"loadBalancerRestarts,omitempty"`
}

// LocalCluster is the infrastructure of a Cluster API cluster on the local runtime.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host"
// +kubebuilder:printcolumn:name="LB Restarts",type="integer",JSONPath=".status.loadBalancerRestarts"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type LocalCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LocalClusterSpec   `json:"spec,omitempty"`
	Status LocalClusterStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions, for Cluster API's condition helpers.
func (c *LocalCluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions, for Cluster API's condition helpers.
func (c *LocalCluster) SetConditions(conditions []metav1.Condition) {
	c.Status.Conditions = conditions
}

// LocalClusterList is a list of LocalClusters.
//
// +kubebuilder:object:root=true
type LocalClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalCluster `json:"items"`
}

// LocalClusterTemplateResource is the LocalCluster a template makes.
type LocalClusterTemplateResource struct {
	// metadata of the LocalCluster.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// spec of the LocalCluster.
	Spec LocalClusterSpec `json:"spec"`
}

// LocalClusterTemplateSpec is the desired state of a LocalClusterTemplate.
type LocalClusterTemplateSpec struct {
	Template LocalClusterTemplateResource `json:"template"`
}

// LocalClusterTemplate makes LocalClusters, for ClusterClasses.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
type LocalClusterTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec LocalClusterTemplateSpec `json:"spec,omitempty"`
}

// LocalClusterTemplateList is a list of LocalClusterTemplates.
//
// +kubebuilder:object:root=true
type LocalClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalClusterTemplate `json:"items"`
}

// LocalMachineSpec is the desired state of a LocalMachine.
type LocalMachineSpec struct {
	// providerID is local://<namespace>/<machine>, set by the provider once the node is started.
	// +optional
	ProviderID string `json:"providerID,omitempty"`
}

// LocalMachineInitializationStatus reports the machine infrastructure's initialization.
type LocalMachineInitializationStatus struct {
	// provisioned is true once the init process of the machine's node runs.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// LocalMachineStatus is the observed state of a LocalMachine.
type LocalMachineStatus struct {
	// initialization reports the Cluster API contract's initialization.
	// +optional
	Initialization LocalMachineInitializationStatus `json:"initialization,omitempty,omitzero"`
	// addresses of the machine's node: its hostname and its InternalIP.
	// +optional
	// +listType=atomic
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`
	// conditions of the LocalMachine: Ready, NodeStarted.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// nodeIP is the node's address on the local runtime's bridge.
	// +optional
	NodeIP string `json:"nodeIP,omitempty"`
	// nodeRestarts counts how often the provider found the node's init process not running and
	// started the node again (each time with a NodeRestarted Event).
	// +optional
	NodeRestarts int32 `json:"nodeRestarts,omitempty"`
}

// LocalMachine is a machine of a Cluster API cluster on the local runtime: a node made of this
// host's namespaces, booted from the machine's bootstrap data.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID"
// +kubebuilder:printcolumn:name="Node Restarts",type="integer",JSONPath=".status.nodeRestarts"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type LocalMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LocalMachineSpec   `json:"spec,omitempty"`
	Status LocalMachineStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions, for Cluster API's condition helpers.
func (m *LocalMachine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions sets the conditions, for Cluster API's condition helpers.
func (m *LocalMachine) SetConditions(conditions []metav1.Condition) {
	m.Status.Conditions = conditions
}

// LocalMachineList is a list of LocalMachines.
//
// +kubebuilder:object:root=true
type LocalMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalMachine `json:"items"`
}

// LocalMachineTemplateResource is the LocalMachine a template makes.
type LocalMachineTemplateResource struct {
	// metadata of the LocalMachine.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// spec of the LocalMachine.
	Spec LocalMachineSpec `json:"spec"`
}

// LocalMachineTemplateSpec is the desired state of a LocalMachineTemplate.
type LocalMachineTemplateSpec struct {
	Template LocalMachineTemplateResource `json:"template"`
}

// LocalMachineTemplate makes LocalMachines, for MachineDeployments, KubeadmControlPlanes and
// ClusterClasses.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
type LocalMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec LocalMachineTemplateSpec `json:"spec,omitempty"`
}

// LocalMachineTemplateList is a list of LocalMachineTemplates.
//
// +kubebuilder:object:root=true
type LocalMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalMachineTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes,
		&LocalCluster{}, &LocalClusterList{}, &LocalClusterTemplate{}, &LocalClusterTemplateList{},
		&LocalMachine{}, &LocalMachineList{}, &LocalMachineTemplate{}, &LocalMachineTemplateList{},
	)
}
