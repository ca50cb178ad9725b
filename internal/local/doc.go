// Package local is the local runtime: Kubernetes clusters whose nodes are made of this host's
// namespaces, as kind makes them of containers. A node (vm) runs containerd, the kubelet and
// kubeadm in namespaces of their own, on the host-only network of hostnet, with the pod network
// of podnet. Beside the nodes:
// the cluster state and flows of `slipway local cluster` (cluster), the load balancer in front of
// the control-plane nodes (lb), the `local` Cluster API infrastructure provider
// (infrastructure) and the host service it reaches from a container (nodeservice), the OCI
// registry the nodes pull from (registry), the host's limits (hostlimits) and the detached
// processes and daemons of all of these (proc).
package local
