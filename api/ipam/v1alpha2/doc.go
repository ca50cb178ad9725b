// Package v1alpha2 holds the API of Cluster API's in-cluster IPAM provider
// (ipam.cluster.x-k8s.io/v1alpha2), which TKG installs as caip-in-cluster: InClusterIPPool and
// the cluster-scoped GlobalInClusterIPPool, pools of addresses that IPAddressClaims name in their
// poolRef. Field names and JSON tags follow the provider's.
//
// +kubebuilder:object:generate=true
// +groupName=ipam.cluster.x-k8s.io
package v1alpha2
