// Package vm makes a node of the local runtime the way a hypervisor makes a small VM, from
// namespaces of this host instead of Docker's privileged container: a network namespace with one
// address on the host-only bridge, a mount namespace in which the node's state directory is
// bind-mounted over the fixed paths kubeadm, the kubelet and containerd use, its own host name and
// a cgroup subtree. In it, the node's init process (Boot, `slipway local node boot`) runs
// containerd with runc and the real kubelet, restarting them when they die as systemd would, and
// executes the node's cloud-init once: its files written, its commands run (`kubeadm init` or
// `kubeadm join`, for real).
//
// The host side (Create, Start, Delete) needs root: it makes the bridge, the namespace, the veth
// pair and the cgroups, and removes every one of them again.
package vm
