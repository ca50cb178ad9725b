package certmanager_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/internal/controllers/certmanager"
	"github.com/slipway-dev/slipway/internal/pki"
)

func TestCAIssuerIsReadyOnceItsSecretHoldsACA(t *testing.T) {
	const ns = "issuer"
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, caIssuer(ns, "ca", "ca-key-pair"),
		newObject(certmanager.IssuerGVK, ns, "acme", map[string]any{"acme": map[string]any{
			"server": "https://acme.example/directory", "privateKeySecretRef": map[string]any{"name": "acme"}}}))
	issuer := waitReady(t, certmanager.IssuerGVK, ns, "ca", metav1.ConditionFalse, certmanager.ReasonErrGetKeyPair)
	if c, _ := ready(issuer); !strings.HasPrefix(c.Message, "Error getting keypair for CA issuer: ") || !strings.Contains(c.Message, `"ca-key-pair" not found`) {
		t.Errorf("Ready says %q", c.Message)
	}
	waitEvent(t, ns, "ca", corev1.EventTypeWarning, certmanager.ReasonErrGetKeyPair, func(n string) bool { return strings.Contains(n, `"ca-key-pair" not found`) })
	waitReady(t, certmanager.IssuerGVK, ns, "acme", metav1.ConditionFalse, certmanager.ReasonUnsupportedIssuer)

	// A key pair that is not a CA's is refused; a CA's is verified, without waiting for a resync.
	notCA, err := pki.SelfSign(pki.CertSpec{CommonName: "not-a-ca"}, false, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	create(t, tlsSecret(t, ns, "ca-key-pair", notCA))
	waitReady(t, certmanager.IssuerGVK, ns, "ca", metav1.ConditionFalse, certmanager.ReasonErrInvalidKeyPair)
	ca, err := pki.NewCA("issuer-ca")
	if err != nil {
		t.Fatal(err)
	}
	s := tlsSecret(t, ns, "ca-key-pair", ca)
	if err := env.Client.Update(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	waitReady(t, certmanager.IssuerGVK, ns, "ca", metav1.ConditionTrue, certmanager.ReasonKeyPairVerified)
	waitEvent(t, ns, "ca", corev1.EventTypeNormal, certmanager.ReasonKeyPairVerified, func(n string) bool { return n == "Signing CA verified" })
}

// tlsSecret is a kubernetes.io/tls Secret holding a key pair.
func tlsSecret(t *testing.T, namespace, name string, kp *pki.KeyPair) *corev1.Secret {
	t.Helper()
	key, err := kp.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: kp.CertPEM(), corev1.TLSPrivateKeyKey: key}}
}
