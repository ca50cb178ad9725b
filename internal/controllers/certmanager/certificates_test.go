package certmanager_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/controllers/certmanager"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

func issuedNote(note string) bool { return note == "The certificate has been successfully issued" }

func TestIssuesCAAndLeafCertificates(t *testing.T) {
	const ns = "issue"
	caChain(t, ns)
	dnsNames := []string{"webhook-service.issue.svc", "webhook-service.issue.svc.cluster.local"}
	create(t, certificate(ns, "serving", "ca", map[string]any{"commonName": "webhook", "dnsNames": []any{dnsNames[0], dnsNames[1]}, "duration": "24h"}))

	caCert := waitReady(t, certmanager.CertificateGVK, ns, "ca", metav1.ConditionTrue, certmanager.ReasonReady)
	caSecret := secret(t, ns, "ca")
	ca := leaf(t, caSecret)
	if !ca.IsCA || ca.Subject.CommonName != "issue-ca" || !bytes.Equal(caSecret.Data[corev1.TLSCertKey], caSecret.Data[certmanager.KeyCA]) {
		t.Errorf("the selfSigned CA is CA %v, named %q, its own ca.crt %v", ca.IsCA, ca.Subject.CommonName, bytes.Equal(caSecret.Data[corev1.TLSCertKey], caSecret.Data[certmanager.KeyCA]))
	}
	if got := ca.NotAfter.Sub(ca.NotBefore); got != certmanager.DefaultDuration {
		t.Errorf("the CA lasts %s, want cert-manager's default %s", got, certmanager.DefaultDuration)
	}
	if got := statusTime(t, caCert, "notAfter"); !got.Equal(ca.NotAfter) {
		t.Errorf("CA status.notAfter %s, certificate's %s", got, ca.NotAfter)
	}

	cert := waitReady(t, certmanager.CertificateGVK, ns, "serving", metav1.ConditionTrue, certmanager.ReasonReady)
	s := secret(t, ns, "serving")
	issued := leaf(t, s)
	if !bytes.Equal(s.Data[certmanager.KeyCA], caSecret.Data[corev1.TLSCertKey]) {
		t.Error("the leaf's ca.crt is not the CA's certificate")
	}
	if issued.IsCA || issued.Subject.CommonName != "webhook" || !slices.Equal(issued.DNSNames, dnsNames) {
		t.Errorf("leaf is CA %v, named %q with DNS names %v; want webhook, %v", issued.IsCA, issued.Subject.CommonName, issued.DNSNames, dnsNames)
	}
	if s.Type != corev1.SecretTypeTLS || s.Annotations[certmanager.AnnotationCertificateName] != "serving" || s.Annotations[certmanager.AnnotationIssuerName] != "ca" {
		t.Errorf("Secret is of type %s, annotated %v", s.Type, s.Annotations)
	}
	// Valid from the controller's clock for spec.duration, renewed two thirds into its life.
	if want := clk.Now().Truncate(time.Second); !issued.NotBefore.Equal(want) {
		t.Errorf("leaf valid from %s, want the controller's clock, %s", issued.NotBefore, want)
	}
	if got := issued.NotAfter.Sub(issued.NotBefore); got != 24*time.Hour {
		t.Errorf("leaf lasts %s, want spec.duration 24h", got)
	}
	if got := statusTime(t, cert, "notBefore"); !got.Equal(issued.NotBefore) {
		t.Errorf("status.notBefore %s, certificate's %s", got, issued.NotBefore)
	}
	if got := statusTime(t, cert, "notAfter"); !got.Equal(issued.NotAfter) {
		t.Errorf("status.notAfter %s, certificate's %s", got, issued.NotAfter)
	}
	if got, want := statusTime(t, cert, "renewalTime"), issued.NotAfter.Add(-8*time.Hour); !got.Equal(want) {
		t.Errorf("status.renewalTime %s, want %s", got, want)
	}
	if rev, _, _ := unstructured.NestedInt64(cert.Object, "status", "revision"); rev != 1 {
		t.Errorf("status.revision %d, want 1", rev)
	}

	waitEvent(t, ns, "serving", corev1.EventTypeNormal, certmanager.ReasonIssuing, func(n string) bool { return n == "Issuing certificate as Secret does not exist" })
	waitEvent(t, ns, "serving", corev1.EventTypeNormal, certmanager.ReasonIssuing, issuedNote)
	waitReady(t, certmanager.IssuerGVK, ns, "ca", metav1.ConditionTrue, certmanager.ReasonKeyPairVerified)
	waitEvent(t, ns, "ca", corev1.EventTypeNormal, certmanager.ReasonKeyPairVerified, func(n string) bool { return n == "Signing CA verified" })
	waitReady(t, certmanager.IssuerGVK, ns, "selfsigned", metav1.ConditionTrue, certmanager.ReasonIsReady)
}

func TestClusterIssuerSignsWithItsSecretInTheClusterResourceNamespace(t *testing.T) {
	const ns = "cluster-issued"
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		newObject(certmanager.ClusterIssuerGVK, "", "cluster-selfsigned", map[string]any{"selfSigned": map[string]any{}}),
		certificate(certmanager.DefaultClusterResourceNamespace, "cluster-ca", "cluster-selfsigned",
			map[string]any{"isCA": true, "commonName": "cluster-ca", "issuerRef": map[string]any{"name": "cluster-selfsigned", "kind": "ClusterIssuer"}}),
		newObject(certmanager.ClusterIssuerGVK, "", "cluster-ca", map[string]any{"ca": map[string]any{"secretName": "cluster-ca"}}),
		certificate(ns, "leaf", "cluster-ca", map[string]any{"dnsNames": []any{"leaf.example"},
			"issuerRef": map[string]any{"name": "cluster-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}}))
	waitReady(t, certmanager.ClusterIssuerGVK, "", "cluster-ca", metav1.ConditionTrue, certmanager.ReasonKeyPairVerified)
	waitReady(t, certmanager.CertificateGVK, ns, "leaf", metav1.ConditionTrue, certmanager.ReasonReady)
	issued := leaf(t, secret(t, ns, "leaf"))
	if issued.Subject.CommonName != "leaf.example" {
		t.Errorf("without spec.commonName the leaf is named %q, want its first DNS name", issued.Subject.CommonName)
	}
	if !bytes.Equal(secret(t, ns, "leaf").Data[certmanager.KeyCA], secret(t, certmanager.DefaultClusterResourceNamespace, "cluster-ca").Data[corev1.TLSCertKey]) {
		t.Error("the leaf's ca.crt is not the ClusterIssuer's CA")
	}
}

func TestRenewsWhenTheClockPassesRenewalTime(t *testing.T) {
	const ns = "renew"
	caChain(t, ns)
	create(t, certificate(ns, "serving", "ca", map[string]any{"dnsNames": []any{"renew.example"}, "duration": "1h"}))
	cert := waitReady(t, certmanager.CertificateGVK, ns, "serving", metav1.ConditionTrue, certmanager.ReasonReady)
	before := secret(t, ns, "serving")
	first := leaf(t, before)
	renewal := statusTime(t, cert, "renewalTime")
	if want := first.NotBefore.Add(40 * time.Minute); !renewal.Equal(want) {
		t.Fatalf("status.renewalTime %s, want two thirds into the hour, %s", renewal, want)
	}

	// Past the renewal time, any reconcile renews: here, a touched annotation.
	clk.SetTime(renewal.Add(time.Minute))
	touch(t, certmanager.CertificateGVK, ns, "serving")
	var after *corev1.Secret
	envtest.Eventually(t, 30*time.Second, "a renewed certificate", func() error {
		after = secret(t, ns, "serving")
		if bytes.Equal(after.Data[corev1.TLSCertKey], before.Data[corev1.TLSCertKey]) {
			return fmt.Errorf("the Secret still holds serial %s", first.SerialNumber)
		}
		return nil
	})
	second := leaf(t, after)
	if second.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Error("the renewed certificate has the old serial")
	}
	if !bytes.Equal(after.Data[certmanager.KeyCA], before.Data[certmanager.KeyCA]) {
		t.Error("renewal changed the CA")
	}
	if !second.NotBefore.After(first.NotBefore) {
		t.Errorf("the renewed certificate is valid from %s, not after the first's %s", second.NotBefore, first.NotBefore)
	}
	envtest.Eventually(t, 10*time.Second, "status of the renewed certificate", func() error {
		cert = get(t, certmanager.CertificateGVK, ns, "serving")
		rev, _, _ := unstructured.NestedInt64(cert.Object, "status", "revision")
		notAfter, _, _ := unstructured.NestedString(cert.Object, "status", "notAfter")
		if rev != 2 || notAfter != second.NotAfter.UTC().Format(time.RFC3339) {
			return fmt.Errorf("revision %d, notAfter %s", rev, notAfter)
		}
		return nil
	})
	if got, want := statusTime(t, cert, "renewalTime"), second.NotBefore.Add(40*time.Minute); !got.Equal(want) {
		t.Errorf("status.renewalTime %s, want %s", got, want)
	}
	waitEvent(t, ns, "serving", corev1.EventTypeNormal, certmanager.ReasonIssuing, func(n string) bool {
		return n == "Renewing certificate as renewal was scheduled at "+renewal.UTC().Format(time.RFC3339)
	})
	envtest.Eventually(t, 10*time.Second, "two issuances told", func() error {
		if n := len(slices.DeleteFunc(eventNotes(t, ns, "serving", corev1.EventTypeNormal, certmanager.ReasonIssuing), func(n string) bool { return !issuedNote(n) })); n != 2 {
			return fmt.Errorf("%d Events say the certificate was issued", n)
		}
		return nil
	})
}

func TestRenewBeforeNotLessThanDurationFallsBackWithAWarning(t *testing.T) {
	const ns = "renew-before"
	// The webhook refuses this Certificate; envtest runs none, as when one got in anyway.
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, selfSignedIssuer(ns, "selfsigned"),
		certificate(ns, "serving", "selfsigned", map[string]any{"dnsNames": []any{"rb.example"}, "duration": "1h", "renewBefore": "2h"}))
	cert := waitReady(t, certmanager.CertificateGVK, ns, "serving", metav1.ConditionTrue, certmanager.ReasonReady)
	issued := leaf(t, secret(t, ns, "serving"))
	if got, want := statusTime(t, cert, "renewalTime"), issued.NotBefore.Add(40*time.Minute); !got.Equal(want) {
		t.Errorf("status.renewalTime %s, want two thirds into the hour, %s", got, want)
	}
	note := waitEvent(t, ns, "serving", corev1.EventTypeWarning, certmanager.ReasonInvalidRenewBefore, func(string) bool { return true })
	for _, want := range []string{"spec.renewBefore 2h0m0s", "spec.duration 1h0m0s", "two thirds"} {
		if !strings.Contains(note, want) {
			t.Errorf("the Warning %q does not say %q", note, want)
		}
	}
	// Told once for the generation, however often the Certificate is reconciled.
	touch(t, certmanager.CertificateGVK, ns, "serving")
	time.Sleep(time.Second)
	if n := len(eventNotes(t, ns, "serving", corev1.EventTypeWarning, certmanager.ReasonInvalidRenewBefore)); n != 1 {
		t.Errorf("%d Warnings, want 1", n)
	}
}

func TestWaitsForItsIssuerAndRefusesWhatItCannotUse(t *testing.T) {
	const ns = "waits"
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		certificate(ns, "serving", "later", map[string]any{"dnsNames": []any{"waits.example"}}),
		certificate(ns, "external", "vault", map[string]any{"dnsNames": []any{"waits.example"},
			"issuerRef": map[string]any{"name": "vault", "kind": "VaultIssuer", "group": "vault.example.com"}}))
	cert := waitReady(t, certmanager.CertificateGVK, ns, "serving", metav1.ConditionFalse, certmanager.ReasonIssuerNotReady)
	if c, _ := ready(cert); !strings.Contains(c.Message, `"later" not found`) {
		t.Errorf("Ready says %q", c.Message)
	}
	waitEvent(t, ns, "serving", corev1.EventTypeWarning, certmanager.ReasonIssuerNotReady, func(n string) bool { return strings.Contains(n, `"later" not found`) })
	cert = waitReady(t, certmanager.CertificateGVK, ns, "external", metav1.ConditionFalse, certmanager.ReasonInvalidSpec)
	if c, _ := ready(cert); !strings.Contains(c.Message, `spec.issuerRef.group "vault.example.com" is not supported`) {
		t.Errorf("Ready says %q", c.Message)
	}

	create(t, selfSignedIssuer(ns, "later"))
	waitReady(t, certmanager.CertificateGVK, ns, "serving", metav1.ConditionTrue, certmanager.ReasonReady)
	leaf(t, secret(t, ns, "serving"))
}

func TestConvergedObjectsStayStill(t *testing.T) {
	const ns = "still"
	caChain(t, ns)
	create(t, certificate(ns, "serving", "ca", map[string]any{"dnsNames": []any{"still.example"}}),
		certificate(ns, "intermediate", "ca", map[string]any{"isCA": true, "commonName": "intermediate"}),
		injectInto(ns+"-webhooks", map[string]string{certmanager.AnnotationInjectCAFrom: ns + "/serving"}, 2),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nudge", Annotations: map[string]string{certmanager.AnnotationCertificateName: "serving"}}})
	waitReady(t, certmanager.CertificateGVK, ns, "serving", metav1.ConditionTrue, certmanager.ReasonReady)
	waitReady(t, certmanager.CertificateGVK, ns, "intermediate", metav1.ConditionTrue, certmanager.ReasonReady)
	if !leaf(t, secret(t, ns, "intermediate")).IsCA {
		t.Error("the ca Issuer signed spec.isCA as a leaf")
	}
	waitReady(t, certmanager.IssuerGVK, ns, "ca", metav1.ConditionTrue, certmanager.ReasonKeyPairVerified)
	waitInjected(t, ns+"-webhooks", secret(t, ns, "serving").Data[certmanager.KeyCA])
	issuers := []*unstructured.Unstructured{get(t, certmanager.IssuerGVK, ns, "selfsigned"), get(t, certmanager.IssuerGVK, ns, "ca")}

	// While the objects are watched, their controllers look at them again: the issuers are
	// touched (reconciling them and their Certificates), and so is a Secret that names the
	// Certificate (reconciling the injection).
	stop, wg := make(chan struct{}), sync.WaitGroup{}
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(400 * time.Millisecond):
				touch(t, certmanager.IssuerGVK, ns, "selfsigned")
				touch(t, certmanager.IssuerGVK, ns, "ca")
				touchSecret(t, ns, "nudge")
			}
		}
	})
	envtest.ExpectStill(t, 3*time.Second, envtest.On(env.Client,
		newObject(certmanager.CertificateGVK, ns, "ca", nil), newObject(certmanager.CertificateGVK, ns, "serving", nil),
		newObject(certmanager.CertificateGVK, ns, "intermediate", nil),
		secretKey(ns, "ca"), secretKey(ns, "serving"), secretKey(ns, "intermediate"), webhookKey(ns+"-webhooks")))
	close(stop)
	wg.Wait()
	for _, before := range issuers {
		after := get(t, certmanager.IssuerGVK, ns, before.GetName())
		if b, a := fmt.Sprint(before.Object["status"]), fmt.Sprint(after.Object["status"]); b != a {
			t.Errorf("Issuer %s's status was rewritten although nothing changed:\n%s\n%s", before.GetName(), b, a)
		}
	}
}

// touch sets an annotation of a cert-manager object, which reconciles it and what watches it.
func touch(t *testing.T, gvk schema.GroupVersionKind, namespace, name string) {
	t.Helper()
	u := newObject(gvk, namespace, name, nil)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"test.slipway.dev/touched":%q}}}`, time.Now().Format(time.RFC3339Nano))
	if err := env.Client.Patch(t.Context(), u, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Errorf("failed to touch %s %s/%s: %v", gvk.Kind, namespace, name, err)
	}
}

func touchSecret(t *testing.T, namespace, name string) {
	t.Helper()
	s := secretKey(namespace, name)
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{"test.slipway.dev/touched":%q}}}`, fmt.Sprint(time.Now().UnixNano()))
	if err := env.Client.Patch(t.Context(), s, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Errorf("failed to touch Secret %s/%s: %v", namespace, name, err)
	}
}

func secretKey(namespace, name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}
