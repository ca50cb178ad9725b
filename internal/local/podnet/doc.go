// Package podnet is the local runtime's own pod network, as kindnet is kind's: a DaemonSet on
// every node of a local cluster, in the node's network namespace, that gives the node's pods
// addresses from the node's pod CIDR (the standard CNI plugins bridge, host-local and portmap;
// containerd adds loopback), routes every other node's pod CIDR through that node's address on
// the host's bridge, and masquerades the pods' traffic to anything outside the cluster's pod
// CIDRs, so that the host and other clusters, which have no route to the pods, can answer it.
package podnet
