package pki

import (
	"crypto/x509"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/util/keyutil"
	"sigs.k8s.io/cluster-api/util/secret"
)

func TestControlPlaneCertificatesChainAndName(t *testing.T) {
	cas, err := GenerateCAs()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := ControlPlaneSpec{
		Node:       Node{Name: "n1", IP: net.ParseIP("127.1.0.2"), Address: net.ParseIP("172.18.1.2")},
		EndpointIP: net.ParseIP("127.1.0.1"),
		ServiceIP:  net.ParseIP("10.96.0.1"),
	}
	if err := WriteControlPlane(dir, cas, spec); err != nil {
		t.Fatal(err)
	}
	read, err := ReadCAs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for base, ca := range map[string]*KeyPair{"apiserver": read.Cluster, "etcd/server": read.Etcd, "front-proxy-client": read.FrontProxy} {
		kp, err := Read(filepath.Join(dir, base))
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AddCert(ca.Cert)
		if _, err := kp.Cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			t.Errorf("%s does not chain to its CA: %v", base, err)
		}
	}
	apiserver, _ := Read(filepath.Join(dir, "apiserver"))
	for _, ip := range []string{"127.1.0.2", "172.18.1.2", "127.1.0.1", "10.96.0.1"} {
		if err := apiserver.Cert.VerifyHostname(ip); err != nil {
			t.Errorf("the API server certificate does not name %s: %v", ip, err)
		}
	}
	if err := apiserver.Cert.VerifyHostname("kubernetes.default.svc"); err != nil {
		t.Error(err)
	}
}

func TestParseKeyPairAcceptsClusterAPISecrets(t *testing.T) {
	ca, err := NewCA("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	// A Cluster API <cluster>-ca secret holds tls.crt and tls.key in PEM.
	parsed, err := ParseKeyPair(ca.CertPEM(), keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if !parsed.Cert.Equal(ca.Cert) {
		t.Fatal("certificate changed")
	}
	if _, err := ParseKeyPair([]byte("junk"), keyPEM); err == nil {
		t.Fatal("junk certificate accepted")
	}
}

func TestCAsFromSecretData(t *testing.T) {
	cas, err := GenerateCAs()
	if err != nil {
		t.Fatal(err)
	}
	pair := func(kp *KeyPair) map[string][]byte {
		key, err := kp.KeyPEM()
		if err != nil {
			t.Fatal(err)
		}
		return map[string][]byte{"tls.crt": kp.CertPEM(), "tls.key": key}
	}
	saKey, err := keyutil.MarshalPrivateKeyToPEM(cas.ServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	data := map[secret.Purpose]map[string][]byte{
		secret.ClusterCA: pair(cas.Cluster), secret.EtcdCA: pair(cas.Etcd), secret.FrontProxyCA: pair(cas.FrontProxy),
		secret.ServiceAccount: {secret.TLSKeyDataName: saKey},
	}
	got, err := CAsFromSecretData(data)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Cluster.Cert.Equal(cas.Cluster.Cert) || !got.Etcd.Cert.Equal(cas.Etcd.Cert) {
		t.Fatal("authorities differ")
	}
	delete(data, secret.EtcdCA)
	if _, err := CAsFromSecretData(data); err == nil || !strings.Contains(err.Error(), "<cluster>-etcd is missing") {
		t.Fatalf("a missing secret is reported as %v", err)
	}
}

func TestValidityFromSpec(t *testing.T) {
	ca, err := NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	notBefore := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	notAfter := notBefore.Add(time.Hour)
	spec := CertSpec{CommonName: "leaf", NotBefore: notBefore, NotAfter: notAfter}
	leaf, err := ca.Issue(spec)
	if err != nil {
		t.Fatal(err)
	}
	self, err := SelfSign(spec, true, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for name, kp := range map[string]*KeyPair{"issued": leaf, "self-signed": self} {
		if !kp.Cert.NotBefore.Equal(notBefore) || !kp.Cert.NotAfter.Equal(notAfter) {
			t.Errorf("%s certificate valid from %s to %s, want %s to %s", name, kp.Cert.NotBefore, kp.Cert.NotAfter, notBefore, notAfter)
		}
	}
}
