// Package certmanager is slipway's stand-in for the part of cert-manager that Cluster API's
// providers use: Issuers and ClusterIssuers of kind selfSigned and ca, Certificates issued into
// Secrets (tls.crt, tls.key, ca.crt) and renewed before they expire, and CA injection into
// webhook configurations and CRDs annotated cert-manager.io/inject-ca-from(-secret). It reads and
// writes cert-manager.io/v1 objects as cert-manager does; cert-manager itself (v1.21) needs
// Kubernetes libraries newer than this stack's, so it cannot run in slipway's binary.
//
// As in cert-manager, each controller has its file: certificates.go issues and renews
// Certificates, issuers.go reports whether Issuers and ClusterIssuers can sign, cainjector.go
// injects CA bundles, and webhook.go validates what is created. api.go holds cert-manager's names
// and the parts of its API that are read.
package certmanager
