package config

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/slipway-dev/slipway/internal/registrytrust"
)

// Node settings: time, name resolution, addresses, audit and trust of the cluster's nodes.
const (
	NTPServers                  = "NTP_SERVERS"
	ControlPlaneNodeNameservers = "CONTROL_PLANE_NODE_NAMESERVERS"
	WorkerNodeNameservers       = "WORKER_NODE_NAMESERVERS"
	// NodeIPAMIPPoolName names the InClusterIPPool the nodes take their addresses from, in the
	// cluster's namespace, instead of DHCP.
	NodeIPAMIPPoolName = "NODE_IPAM_IP_POOL_NAME"
	EnableAuditLogging = "ENABLE_AUDIT_LOGGING"
	// CustomImageRepositorySkipTLSVerify and CustomImageRepositoryCACertificate are how the
	// nodes trust TKG_CUSTOM_IMAGE_REPOSITORY; ProxyCACert is the proxy's CA, which the nodes
	// trust too. Certificates are base64-encoded PEM.
	CustomImageRepositorySkipTLSVerify = "TKG_CUSTOM_IMAGE_REPOSITORY_SKIP_TLS_VERIFY"
	CustomImageRepositoryCACertificate = "TKG_CUSTOM_IMAGE_REPOSITORY_CA_CERTIFICATE"
	ProxyCACert                        = "TKG_PROXY_CA_CERT"
	// NodeSystemWideProxy makes the proxy every process's on the nodes, not containerd's only.
	NodeSystemWideProxy = "TKG_NODE_SYSTEM_WIDE_PROXY"
)

// Nodes are the settings of the cluster's nodes beyond their size.
type Nodes struct {
	NTPServers []string
	// ControlPlaneNameservers and WorkerNameservers are the DNS servers of each role's nodes.
	ControlPlaneNameservers, WorkerNameservers []string
	// IPPool is the InClusterIPPool of the nodes' addresses; empty is DHCP.
	IPPool       string
	AuditLogging bool
	// TrustedCAs are certificates the nodes trust, by name: imageRepository, proxy.
	TrustedCAs []TrustedCA
	// ImageRepository is TKG_CUSTOM_IMAGE_REPOSITORY, the repository the Kubernetes images and
	// packages are copied to (the ClusterClasses' imageRepository.host, as TKG maps it);
	// SkipImageRepositoryTLSVerify makes the nodes pull from its registry without verifying its
	// certificate.
	ImageRepository              string
	SkipImageRepositoryTLSVerify bool
}

// ImageRegistry is the registry of ImageRepository, "" when none is set.
func (n Nodes) ImageRegistry() string {
	registry, _, _ := strings.Cut(n.ImageRepository, "/")
	return registry
}

// ReadRegistryTrust reads how the custom image repository's registry is trusted from v alone
// (TKG_CUSTOM_IMAGE_REPOSITORY and its _CA_CERTIFICATE and _SKIP_TLS_VERIFY), by the rules a
// cluster's configuration checks them with, for a command that reads no cluster configuration.
func ReadRegistryTrust(v *Variables) (registrytrust.Trust, error) {
	k := &completer{v: v, c: &Cluster{}, notify: func(string, ...any) {}}
	k.imageRepository()
	if err := errors.Join(k.errs...); err != nil {
		return registrytrust.Trust{}, err
	}
	return k.c.Nodes.RegistryTrust(), nil
}

// RegistryTrust is how the custom image repository's registry is trusted:
// TKG_CUSTOM_IMAGE_REPOSITORY_CA_CERTIFICATE's certificate, and its host unverified with
// TKG_CUSTOM_IMAGE_REPOSITORY_SKIP_TLS_VERIFY.
func (n Nodes) RegistryTrust() registrytrust.Trust {
	var t registrytrust.Trust
	for _, ca := range n.TrustedCAs {
		if ca.Name == "imageRepository" {
			if pem, err := base64.StdEncoding.DecodeString(ca.Data); err == nil {
				t.CACerts = string(pem)
			}
		}
	}
	if n.SkipImageRepositoryTLSVerify && n.ImageRepository != "" {
		t.SkipVerify = []string{n.ImageRegistry()}
	}
	return t
}

// TrustedCA is a certificate the nodes add to their trust store, as the ClusterClasses' trust
// variable holds it: Data is the base64 of the PEM.
type TrustedCA struct {
	Name string `json:"name"`
	Data string `json:"data"`
}

// nodes reads the node settings. Every value is checked on every provider.
func (k *completer) nodes() {
	n := &k.c.Nodes
	n.NTPServers = k.hosts(NTPServers)
	n.ControlPlaneNameservers = k.addresses(ControlPlaneNodeNameservers)
	n.WorkerNameservers = k.addresses(WorkerNodeNameservers)
	if pool, ok := k.v.Get(NodeIPAMIPPoolName); ok {
		if msgs := validation.IsDNS1123Subdomain(pool); len(msgs) > 0 {
			k.bad("invalid %s %q: name an InClusterIPPool of the cluster's namespace (%s)", NodeIPAMIPPoolName, pool, strings.Join(msgs, "; "))
		}
		n.IPPool = pool
	}
	n.AuditLogging = k.boolean(EnableAuditLogging, k.value(EnableAuditLogging, "false"))
	k.imageRepository()
	if ca := k.certificate(ProxyCACert); ca != "" {
		n.TrustedCAs = append(n.TrustedCAs, TrustedCA{Name: "proxy", Data: ca})
	}
	if wide, ok := k.v.Get(NodeSystemWideProxy); ok && k.boolean(NodeSystemWideProxy, wide) {
		if k.c.Proxy == nil {
			k.bad("%s is true but no proxy is used: set %s to true with %s and %s, or drop %s", NodeSystemWideProxy, HTTPProxyEnabled, HTTPProxy, HTTPSProxy, NodeSystemWideProxy)
		} else {
			k.c.Proxy.SystemWide = true
		}
	}
}

// imageRepository reads the custom image repository's host and how it is trusted.
func (k *completer) imageRepository() {
	n := &k.c.Nodes
	if repo, ok := k.v.Get(CustomImageRepository); ok {
		n.ImageRepository = repo
		if strings.Contains(repo, "://") || n.ImageRegistry() == "" {
			k.bad("invalid %s %q: give a registry path without a scheme, as registry.example.com/tkg", CustomImageRepository, repo)
		}
	}
	n.SkipImageRepositoryTLSVerify = k.boolean(CustomImageRepositorySkipTLSVerify, k.value(CustomImageRepositorySkipTLSVerify, "false"))
	if n.SkipImageRepositoryTLSVerify && n.ImageRepository == "" {
		k.bad("%s is true but %s is not set: it applies to the custom image repository only: set both, or drop %s",
			CustomImageRepositorySkipTLSVerify, CustomImageRepository, CustomImageRepositorySkipTLSVerify)
	}
	if ca := k.certificate(CustomImageRepositoryCACertificate); ca != "" {
		n.TrustedCAs = append(n.TrustedCAs, TrustedCA{Name: "imageRepository", Data: ca})
	}
}

// list splits a comma-separated value into its entries, without blanks.
func list(value string) []string {
	var out []string
	for _, e := range strings.Split(value, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// hosts reads a list of host names or addresses.
func (k *completer) hosts(name string) []string {
	value, ok := k.v.Get(name)
	if !ok {
		return nil
	}
	out := list(value)
	for _, h := range out {
		if net.ParseIP(h) == nil && len(validation.IsDNS1123Subdomain(h)) > 0 {
			k.bad("invalid %s %q: %q is neither an IP address nor a host name: list servers separated by commas, as 0.pool.ntp.org,10.0.0.1", name, value, h)
		}
	}
	return out
}

// addresses reads a list of IP addresses.
func (k *completer) addresses(name string) []string {
	value, ok := k.v.Get(name)
	if !ok {
		return nil
	}
	out := list(value)
	for _, a := range out {
		if net.ParseIP(a) == nil {
			k.bad("invalid %s %q: %q is not an IP address: list the DNS servers' addresses separated by commas, as 10.0.0.2,10.0.0.3", name, value, a)
		}
	}
	return out
}

// certificate reads a base64-encoded PEM of one or more X.509 certificates, and returns it
// base64-encoded again, without blanks.
func (k *completer) certificate(name string) string {
	value, ok := k.v.Get(name)
	if !ok {
		return ""
	}
	compact := strings.Join(strings.Fields(value), "")
	data, err := base64.StdEncoding.DecodeString(compact)
	if err != nil {
		k.bad("invalid %s: it is not base64: give the certificate's PEM base64-encoded, as `base64 -w0 ca.crt` writes it", name)
		return ""
	}
	count := 0
	for rest := data; ; count++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			k.bad("invalid %s: it holds a PEM %s, not a CERTIFICATE", name, block.Type)
			return ""
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			k.bad("invalid %s: certificate %d cannot be read: %v", name, count+1, err)
			return ""
		}
	}
	if count == 0 {
		k.bad("invalid %s: the base64 decodes to no PEM certificate: give the certificate's PEM (-----BEGIN CERTIFICATE-----) base64-encoded", name)
		return ""
	}
	return compact
}
