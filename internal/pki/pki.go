package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// leafValidity is how long issued certificates last, as kubeadm's default (CAs last ten years).
const leafValidity = 365 * 24 * time.Hour

// KeyPair is a certificate and its private key.
type KeyPair struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// CertPEM returns the certificate in PEM.
func (kp *KeyPair) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: kp.Cert.Raw})
}

// KeyPEM returns the private key in PEM.
func (kp *KeyPair) KeyPEM() ([]byte, error) { return keyutil.MarshalPrivateKeyToPEM(kp.Key) }

// NewKey returns a new private key.
func NewKey() (crypto.Signer, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// NewCA returns a new self-signed CA.
func NewCA(commonName string) (*KeyPair, error) {
	key, err := NewKey()
	if err != nil {
		return nil, err
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: commonName}, key)
	if err != nil {
		return nil, fmt.Errorf("failed to create CA %s: %w", commonName, err)
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// ParseKeyPair reads a PEM certificate and key, such as a Cluster API CA secret's tls.crt and
// tls.key.
func ParseKeyPair(certPEM, keyPEM []byte) (*KeyPair, error) {
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("failed to parse certificate: %w", err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("failed to parse private key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("private key cannot sign")
	}
	return &KeyPair{Cert: certs[0], Key: signer}, nil
}

// CertSpec is what a leaf certificate says.
type CertSpec struct {
	CommonName   string
	Organization []string
	DNSNames     []string
	IPs          []net.IP
	Usages       []x509.ExtKeyUsage
	// NotBefore and NotAfter, when set, bound the certificate's validity; by default it is valid
	// from five minutes ago for the issuer's validity.
	NotBefore, NotAfter time.Time
}

// Issue signs a new leaf certificate with the CA.
func (ca *KeyPair) Issue(spec CertSpec) (*KeyPair, error) {
	return sign(spec, ca, leafValidity, false)
}

// IssueCA signs a new intermediate CA with the CA.
func (ca *KeyPair) IssueCA(spec CertSpec) (*KeyPair, error) {
	return sign(spec, ca, leafValidity, true)
}

// sign makes a certificate for a new key, signed by parent, or by the new key itself when parent
// is nil; with isCA it can sign others.
func sign(spec CertSpec, parent *KeyPair, validity time.Duration, isCA bool) (*KeyPair, error) {
	key, err := NewKey()
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).SetInt64(math.MaxInt64))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	notBefore, notAfter := now.Add(-5*time.Minute), now.Add(validity)
	if !spec.NotBefore.IsZero() {
		notBefore = spec.NotBefore
	}
	if !spec.NotAfter.IsZero() {
		notAfter = spec.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: spec.CommonName, Organization: spec.Organization},
		DNSNames:     spec.DNSNames,
		IPAddresses:  spec.IPs,
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  spec.Usages,
	}
	// Self-signed certificates say whether they are a CA, as cert-manager's do; leaves keep
	// what they had.
	tmpl.BasicConstraintsValid, tmpl.IsCA = parent == nil || isCA, isCA
	if isCA {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	signer, signerKey := tmpl, crypto.Signer(key)
	if parent != nil {
		signer, signerKey = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, key.Public(), signerKey)
	if err != nil {
		return nil, fmt.Errorf("failed to sign certificate %s: %w", spec.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// Write stores the pair as <base>.crt and <base>.key.
func (kp *KeyPair) Write(base string) error {
	keyPEM, err := kp.KeyPEM()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(base), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(base+".crt", kp.CertPEM(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(base+".key", keyPEM, 0o600)
}

// Read loads <base>.crt and <base>.key.
func Read(base string) (*KeyPair, error) {
	certPEM, err := os.ReadFile(base + ".crt")
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(base + ".key")
	if err != nil {
		return nil, err
	}
	return ParseKeyPair(certPEM, keyPEM)
}

// Usages of leaf certificates.
var (
	ServerUsage       = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	ClientUsage       = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	ServerClientUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
)

// SelfSign makes a certificate signed by its own key, as cert-manager's selfSigned issuer does;
// with isCA it can sign others.
func SelfSign(spec CertSpec, isCA bool, validity time.Duration) (*KeyPair, error) {
	return sign(spec, nil, validity, isCA)
}
