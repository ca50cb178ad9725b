package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InClusterIPPoolSpec is a pool's addresses and the network they are on.
type InClusterIPPoolSpec struct {
	// Addresses are the addresses to assign: single addresses, ranges (10.0.0.10-10.0.0.20) and
	// CIDRs (10.0.0.128/28); they need not be contiguous.
	// +kubebuilder:validation:MinItems=1
	Addresses []string `json:"addresses"`
	// Prefix is the prefix length of the network the addresses are on.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	Prefix int `json:"prefix"`
	// Gateway is the network's gateway; it is never assigned.
	// +optional
	Gateway string `json:"gateway,omitempty"`
	// AllocateReservedIPAddresses lets the network address and, for IPv4, the broadcast address
	// of the network be assigned.
	// +optional
	AllocateReservedIPAddresses bool `json:"allocateReservedIPAddresses,omitempty"`
	// ExcludedAddresses are never assigned; same forms as Addresses.
	// +optional
	ExcludedAddresses []string `json:"excludedAddresses,omitempty"`
}

// InClusterIPPoolStatus is a pool's observed state.
type InClusterIPPoolStatus struct {
	// Addresses counts the pool's addresses.
	// +optional
	Addresses *InClusterIPPoolStatusIPAddresses `json:"ipAddresses,omitempty"`
}

// InClusterIPPoolStatusIPAddresses counts a pool's addresses.
type InClusterIPPoolStatusIPAddresses struct {
	// Total is how many addresses the pool can assign.
	Total int `json:"total"`
	// Free is how many of them are not assigned.
	Free int `json:"free"`
	// Used is how many addresses are assigned from the pool.
	Used int `json:"used"`
	// OutOfRange is how many assigned addresses are no longer in the pool's addresses.
	OutOfRange int `json:"outOfRange"`
}

// InClusterIPPool is a namespaced pool: claims of its namespace may name it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=cluster-api
// +kubebuilder:printcolumn:name="Addresses",type="string",JSONPath=".spec.addresses",description="Addresses to assign"
// +kubebuilder:printcolumn:name="Total",type="integer",JSONPath=".status.ipAddresses.total",description="Addresses the pool can assign"
// +kubebuilder:printcolumn:name="Free",type="integer",JSONPath=".status.ipAddresses.free",description="Addresses not assigned"
// +kubebuilder:printcolumn:name="Used",type="integer",JSONPath=".status.ipAddresses.used",description="Addresses assigned"
type InClusterIPPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   InClusterIPPoolSpec   `json:"spec,omitempty"`
	Status InClusterIPPoolStatus `json:"status,omitempty"`
}

// InClusterIPPoolList is a list of InClusterIPPools.
//
// +kubebuilder:object:root=true
type InClusterIPPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []InClusterIPPool `json:"items"`
}

// GlobalInClusterIPPool is a cluster-scoped pool: claims of any namespace may name it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=cluster-api
// +kubebuilder:printcolumn:name="Addresses",type="string",JSONPath=".spec.addresses",description="Addresses to assign"
// +kubebuilder:printcolumn:name="Total",type="integer",JSONPath=".status.ipAddresses.total",description="Addresses the pool can assign"
// +kubebuilder:printcolumn:name="Free",type="integer",JSONPath=".status.ipAddresses.free",description="Addresses not assigned"
// +kubebuilder:printcolumn:name="Used",type="integer",JSONPath=".status.ipAddresses.used",description="Addresses assigned"
type GlobalInClusterIPPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   InClusterIPPoolSpec   `json:"spec,omitempty"`
	Status InClusterIPPoolStatus `json:"status,omitempty"`
}

// GlobalInClusterIPPoolList is a list of GlobalInClusterIPPools.
//
// +kubebuilder:object:root=true
type GlobalInClusterIPPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GlobalInClusterIPPool `json:"items"`
}
