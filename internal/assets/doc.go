// Package assets finds the upstream binaries that hack/tools builds (kube-apiserver,
// kube-controller-manager, kube-scheduler for each supported Kubernetes version, and etcd) so
// that the local runtime and the test harness run the real thing, and says how to build them
// when they are missing.
package assets
