// Package pki issues the certificates and kubeconfigs of a local cluster in kubeadm's layout
// (pki/ca.crt, pki/apiserver.crt, pki/etcd/server.crt, sa.key, admin.conf, …), signed by the
// cluster's CAs: either supplied (a Cluster API cluster's <cluster>-ca, -etcd, -sa and -proxy
// secrets, so that the kubeconfig Cluster API generates works unchanged) or generated.
package pki
