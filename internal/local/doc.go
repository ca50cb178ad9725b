// Package local is the local runtime: Kubernetes clusters whose nodes are processes on this
// host, as kind builds them from containers. Its sub-packages hold the cluster state and flows
// (cluster), the certificates (pki), the node agent that stands in for the kubelet (node) and
// the load balancer in front of several control-plane nodes (lb).
package local
