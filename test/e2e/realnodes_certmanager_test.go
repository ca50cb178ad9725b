package e2e

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/client/clusterctl"
)

// Upstream's cert-manager module, which `make images` builds at clusterctl.CertManagerVersion
// (hack/images/cert-manager).
const certManagerModule = "github.com/cert-manager/cert-manager"

// certManagerIssuers is a CA made by a self-signed Issuer, a CA Issuer of it, and a serving
// certificate that CA signs: what Cluster API's providers ask of cert-manager for their webhooks.
const certManagerIssuers = `apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: e2e-selfsigned
  namespace: default
spec:
  selfSigned: {}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: e2e-ca
  namespace: default
spec:
  isCA: true
  commonName: e2e-ca
  secretName: e2e-ca
  issuerRef:
    name: e2e-selfsigned
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: e2e-ca
  namespace: default
spec:
  ca:
    secretName: e2e-ca
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: e2e-serving
  namespace: default
spec:
  secretName: e2e-serving
  dnsNames: [e2e-webhook.default.svc]
  issuerRef:
    name: e2e-ca
`

// runUpstreamCertManager installs upstream's cert-manager from its own release manifest (its
// chart rendered as its release renders it, hack/images/cert-manager/render) on a cluster of
// real nodes: its three Deployments become Available from the images built here, its CA
// injector gives its webhook configurations their CA, its webhook refuses an invalid
// Certificate, and its controller issues a CA and a serving certificate the CA signs. Deleting
// the manifest, the Secrets and the Leases it leaves removes it.
func runUpstreamCertManager(t *testing.T, registryAddr string, kubectl func(args ...string) (string, error)) {
	ctx := t.Context()
	mustKubectl := func(stdin string, args ...string) string {
		t.Helper()
		return mustKubectlStdin(t, kubectl, stdin, args...)
	}
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]string{}
	for _, name := range []string{"controller", "webhook", "cainjector"} {
		refs[name] = "quay.io/jetstack/cert-manager-" + name + ":" + clusterctl.CertManagerVersion
		pushUpstreamImage(t, root, registryAddr, refs[name], certManagerModule, clusterctl.CertManagerVersion)
	}
	release := renderCertManagerRelease(t, root)
	for name, ref := range refs {
		if !strings.Contains(release, `image: "`+ref+`"`) {
			t.Fatalf("cert-manager's release manifest does not run %s as its %s", ref, name)
		}
	}

	// A failure leaves neither its webhook, which would refuse what the test does next, nor its
	// objects; the test's context is gone by the time cleanups run.
	t.Cleanup(func() {
		if t.Failed() {
			_, _ = kubectlStdin(context.Background(), kubectl, certManagerIssuers, "delete", "-f", "-", "--ignore-not-found", "--timeout=1m")
			_, _ = kubectlStdin(context.Background(), kubectl, release, "delete", "-f", "-", "--ignore-not-found", "--timeout=2m")
		}
	})
	start := time.Now()
	mustKubectl(release, "apply", "-f", "-")
	mustKubectl("", "wait", "-n", "cert-manager", "--for=condition=Available", "deployment", "--all", "--timeout=3m")
	t.Logf("cert-manager's Deployments Available %s after apply", time.Since(start).Round(100*time.Millisecond))
	eventually(t, 2*time.Minute, "the CA injector's CA in the webhook configurations", func() error {
		for _, kind := range []string{"validatingwebhookconfiguration", "mutatingwebhookconfiguration"} {
			out, err := kubectl("get", kind, "cert-manager-webhook", "-o", "jsonpath={.webhooks[0].clientConfig.caBundle}")
			if err != nil || out == "" {
				return fmt.Errorf("%s cert-manager-webhook has no caBundle: %v %s", kind, err, out)
			}
		}
		return nil
	})

	// Its webhook validates: a key of 123 bits is refused at the API, naming the webhook.
	invalid := "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: e2e-invalid\n  namespace: default\n" +
		"spec:\n  secretName: e2e-invalid\n  dnsNames: [invalid.example]\n  issuerRef:\n    name: e2e-selfsigned\n" +
		"  privateKey:\n    algorithm: RSA\n    size: 123\n"
	var refused string
	eventually(t, time.Minute, "the webhook refusing an invalid Certificate", func() error {
		out, err := kubectlStdin(ctx, kubectl, invalid, "apply", "-f", "-")
		if err == nil {
			_, _ = kubectl("delete", "certificate", "e2e-invalid", "-n", "default")
			return fmt.Errorf("the Certificate was admitted:\n%s", out)
		}
		if !strings.Contains(out, `admission webhook "webhook.cert-manager.io" denied the request`) {
			return fmt.Errorf("not refused by the webhook: %s", out)
		}
		refused = out
		return nil
	})
	t.Logf("an invalid Certificate: %s", strings.TrimSpace(refused))

	issued := time.Now()
	mustKubectl(certManagerIssuers, "apply", "-f", "-")
	mustKubectl("", "wait", "-n", "default", "--for=condition=Ready", "certificate/e2e-ca", "certificate/e2e-serving", "--timeout=2m")
	t.Logf("cert-manager issued a CA and a certificate it signs %s after apply", time.Since(issued).Round(100*time.Millisecond))
	ca := secretCertificate(t, mustKubectl("", "get", "secret", "e2e-ca", "-n", "default", "-o", "jsonpath={.data.tls\\.crt}"))
	serving := secretCertificate(t, mustKubectl("", "get", "secret", "e2e-serving", "-n", "default", "-o", "jsonpath={.data.tls\\.crt}"))
	if !ca.IsCA {
		t.Errorf("the CA certificate is not a CA: %v", ca.Subject)
	}
	if err := serving.CheckSignatureFrom(ca); err != nil {
		t.Errorf("the serving certificate is not signed by the CA: %v", err)
	}
	if len(serving.DNSNames) != 1 || serving.DNSNames[0] != "e2e-webhook.default.svc" {
		t.Errorf("the serving certificate's DNS names are %v, want [e2e-webhook.default.svc]", serving.DNSNames)
	}
	logProcessMemory(t, "cert-manager's processes", "/app/cmd/")

	// The Secrets a Certificate wrote stay when it goes, as cert-manager keeps them; the test
	// removes them with the rest, and its leader-election Leases in kube-system.
	mustKubectl(certManagerIssuers, "delete", "-f", "-", "--timeout=2m")
	mustKubectl("", "delete", "secret", "-n", "default", "e2e-ca", "e2e-serving")
	deleteRelease(t, kubectl, release, "cert-manager.io")
	mustKubectl("", "delete", "lease", "-n", "kube-system", "cert-manager-controller", "cert-manager-cainjector-leader-election",
		"cert-manager-cainjector-leader-election-core", "--ignore-not-found")
	for _, obj := range [][]string{{"namespace", "cert-manager"}, {"crd", "certificates.cert-manager.io"}, {"secret", "-n", "default", "e2e-ca"},
		{"validatingwebhookconfiguration", "cert-manager-webhook"}, {"clusterrole", "cert-manager-controller-certificates"}} {
		if out, err := kubectl(append([]string{"get"}, obj...)...); err == nil || !strings.Contains(out, "NotFound") {
			t.Errorf("%s outlived the delete: %v\n%s", strings.Join(obj, " "), err, out)
		}
	}
}

// renderCertManagerRelease renders upstream's release manifest of cert-manager from the module
// `make images` builds it from (hack/images/cert-manager/render).
func renderCertManagerRelease(t *testing.T, root string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "cert-manager.yaml")
	render := exec.CommandContext(t.Context(), "go", "run", "./render", "-o", out)
	render.Dir = filepath.Join(root, "hack", "images", "cert-manager")
	if msg, err := render.CombinedOutput(); err != nil {
		t.Fatalf("rendering cert-manager's release in hack/images/cert-manager: %v\n%s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// secretCertificate parses the first certificate of a Secret's base64 tls.crt.
func secretCertificate(t *testing.T, data string) *x509.Certificate {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		t.Fatalf("tls.crt holds no PEM block: %q", raw)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
