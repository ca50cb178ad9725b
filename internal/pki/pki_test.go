package pki

import (
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/util/keyutil"
	"sigs.k8s.io/cluster-api/util/secret"
)

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
