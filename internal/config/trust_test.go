package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReadRegistryTrust reads the custom image repository's trust from the environment alone,
// as `local cluster create --bootstrap` does: its CA and its host unverified; a value that is
// not base64, and skipping verification without a repository, are refused naming the variable.
func TestReadRegistryTrust(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "registry CA"}, NotBefore: time.Now(),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	read := func(env ...string) (string, []string, error) {
		v, err := Read("", env)
		if err != nil {
			t.Fatal(err)
		}
		trust, err := ReadRegistryTrust(v)
		return trust.CACerts, trust.SkipVerify, err
	}
	got, skip, err := read(CustomImageRepository+"=registry.example.com:8443/tkg", CustomImageRepositoryCACertificate+"="+base64.StdEncoding.EncodeToString([]byte(ca)),
		CustomImageRepositorySkipTLSVerify+"=true")
	if err != nil || got != ca || !slices.Equal(skip, []string{"registry.example.com:8443"}) {
		t.Errorf("trust: CA %q, unverified %v, %v", got, skip, err)
	}
	// Only the repository's variables are read: another node setting does not stop it.
	if got, skip, err := read(NodeSystemWideProxy + "=true"); err != nil || got != "" || skip != nil {
		t.Errorf("no variables: CA %q, unverified %v, %v; want nothing", got, skip, err)
	}
	for _, tc := range []struct{ env, want string }{
		{CustomImageRepositoryCACertificate + "=not base64!", CustomImageRepositoryCACertificate},
		{CustomImageRepositorySkipTLSVerify + "=true", CustomImageRepository + " is not set"},
	} {
		if _, _, err := read(tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", tc.env, err, tc.want)
		}
	}
}
