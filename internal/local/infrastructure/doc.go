// Package infrastructure is the `local` Cluster API infrastructure provider: it reconciles
// LocalClusters (a loopback address block and a load balancer for the control-plane endpoint)
// and LocalMachines (a node of the local runtime, started from the Machine's kubeadm bootstrap
// data and stopped when the machine is deleted). The nodes are processes on this host, kept in
// the local runtime's store beside the clusters `slipway local cluster create` makes.
package infrastructure
