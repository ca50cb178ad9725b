// Package infrastructure is the `local` Cluster API infrastructure provider: it reconciles
// LocalClusters (an address block of the bridge and a load balancer for the control-plane
// endpoint) and LocalMachines (a node of the local runtime, booted from the Machine's kubeadm
// bootstrap data and powered off when the machine is deleted). The nodes are kept in the local
// runtime's store beside the clusters `slipway local cluster create` makes.
package infrastructure
