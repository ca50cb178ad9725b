// Package hypervisor is the simulated ESXi behind slipway's vCenter simulator: a VM that is
// powered on and carries a kubeadm cloud-init in its guestinfo (as CAPV clones them) boots as a
// node of the local runtime; it reports its guest IP and host name back to vCenter as VMware
// Tools would; a VM powered off or destroyed stops its node. The nodes of one cluster form a
// local cluster whose load balancer serves the control-plane endpoint on the bridge, which
// kube-vip does on real VMs; a simulator off the bridge is the nodes' egress. No VM runs: the
// node is one of the local runtime's, and kube-vip and VMware Tools are simulated.
package hypervisor
