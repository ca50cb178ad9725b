// Package ipam is Cluster API's in-cluster IPAM provider, as TKG installs it (caip-in-cluster):
// it assigns addresses from InClusterIPPools and GlobalInClusterIPPools to the IPAddressClaims
// that name them, as IPAddress objects, and counts each pool's total, used and free addresses.
package ipam
