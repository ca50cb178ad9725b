// Package node is the node agent of the local runtime, the kubelet's stand-in: one process per
// node that runs the static control-plane components (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler) on control-plane nodes, registers the Node and renews
// its Lease, publishes mirror pods with the components' real health, runs the pods bound to the
// node (a slipway component as a child process, any other image simulated), and serves the
// kubelet API the API server calls for logs and port-forwarding.
package node
