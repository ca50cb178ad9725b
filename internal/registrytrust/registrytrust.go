package registrytrust

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Trust is how the registries are trusted beyond the system's CA certificates.
type Trust struct {
	// CACerts is PEM: one or more CA certificates trusted besides the system's.
	CACerts string
	// SkipVerify are hosts (host or host:port) whose certificates are not verified.
	SkipVerify []string
}

// Empty says the trust adds nothing to the system's.
func (t Trust) Empty() bool { return strings.TrimSpace(t.CACerts) == "" && len(t.SkipVerify) == 0 }

// Hosts splits a comma-separated list of hosts, as kapp-controller's dangerousSkipTLSVerify.
func Hosts(csv string) []string {
	var hosts []string
	for h := range strings.SplitSeq(csv, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// Transport returns the transport that trusts as t says, on go-containerregistry's default
// transport; nil when t adds nothing (the default transport is used). CACerts that hold no
// certificate are an error.
func (t Trust) Transport() (http.RoundTripper, error) {
	if t.Empty() {
		return nil, nil
	}
	base, ok := remote.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, errors.New("go-containerregistry's default transport is not an *http.Transport")
	}
	verified := base.Clone()
	verified.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if strings.TrimSpace(t.CACerts) != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM([]byte(t.CACerts)) {
			return nil, errors.New("the registry CA certificates hold no PEM certificate")
		}
		verified.TLSClientConfig.RootCAs = pool
	}
	if len(t.SkipVerify) == 0 {
		return verified, nil
	}
	unverified := base.Clone()
	unverified.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} //nolint:gosec // the user named these hosts
	return skipping{hosts: t.SkipVerify, verified: verified, unverified: unverified}, nil
}

// skipping sends a request to a host named in hosts through the transport that does not verify
// certificates, any other through the one that does.
type skipping struct {
	hosts                []string
	verified, unverified http.RoundTripper
}

// CloseIdleConnections closes both transports' idle connections.
func (s skipping) CloseIdleConnections() {
	for _, t := range []http.RoundTripper{s.verified, s.unverified} {
		if c, ok := t.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}

func (s skipping) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	bare, _, err := net.SplitHostPort(host)
	if err != nil {
		bare = host
	}
	if slices.Contains(s.hosts, host) || slices.Contains(s.hosts, bare) {
		return s.unverified.RoundTrip(req)
	}
	return s.verified.RoundTrip(req)
}

// Untrusted says err is a registry's certificate that could not be verified, which
// TKG_CUSTOM_IMAGE_REPOSITORY_CA_CERTIFICATE or _SKIP_TLS_VERIFY would mend.
func Untrusted(err error) bool {
	var unknown x509.UnknownAuthorityError
	var verification *tls.CertificateVerificationError
	var invalid x509.CertificateInvalidError
	var hostname x509.HostnameError
	return errors.As(err, &unknown) || errors.As(err, &verification) || errors.As(err, &invalid) || errors.As(err, &hostname)
}
