package certmanager_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/slipway-dev/slipway/internal/controllers/certmanager"
	"github.com/slipway-dev/slipway/internal/pki"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

// certManagerModule gives cert-manager's CRDs, the version clusterctl installs
// (internal/client/clusterctl.CertManagerVersion).
const certManagerModule = "github.com/cert-manager/cert-manager@v1.21.2"

var (
	env *envtest.Environment
	// clk is the controllers' clock: it stands still unless a test moves it.
	clk = clocktesting.NewFakePassiveClock(time.Now())
)

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		dir, err := certManagerCRDs()
		if err != nil {
			panic(err)
		}
		if _, err := crenvtest.InstallCRDs(e.Config, crenvtest.CRDInstallOptions{Paths: []string{dir}, ErrorIfPathMissing: true}); err != nil {
			panic(fmt.Sprintf("failed to install cert-manager's CRDs: %v", err))
		}
		if err := e.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: certmanager.DefaultClusterResourceNamespace}}); err != nil {
			panic(err)
		}
		e.StartManager(func(mgr ctrl.Manager) error {
			if err := (&certmanager.CertificateReconciler{Client: mgr.GetClient(), Clock: clk}).SetupWithManager(mgr); err != nil {
				return err
			}
			for _, gvk := range []schema.GroupVersionKind{certmanager.IssuerGVK, certmanager.ClusterIssuerGVK} {
				if err := (&certmanager.IssuerReconciler{Client: mgr.GetClient(), GVK: gvk, Clock: clk}).SetupWithManager(mgr); err != nil {
					return err
				}
			}
			for _, obj := range []certmanager.Injectable{&admissionregistrationv1.ValidatingWebhookConfiguration{},
				&admissionregistrationv1.MutatingWebhookConfiguration{}, &apiextensionsv1.CustomResourceDefinition{}} {
				if err := (&certmanager.CAInjector{Client: mgr.GetClient(), Object: obj}).SetupWithManager(mgr); err != nil {
					return err
				}
			}
			return nil
		})
	}))
}

// certManagerCRDs returns the directory of cert-manager's CRDs in its module, downloading it if
// needed, as hack/clusterctl-repo does.
func certManagerCRDs() (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("go", "mod", "download", "-json", certManagerModule)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go mod download %s: %w: %s", certManagerModule, err, stderr.String())
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil {
		return "", err
	}
	return filepath.Join(info.Dir, "deploy", "crds"), nil
}

// Builders of cert-manager objects.

func newObject(gvk schema.GroupVersionKind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func selfSignedIssuer(namespace, name string) *unstructured.Unstructured {
	return newObject(certmanager.IssuerGVK, namespace, name, map[string]any{"selfSigned": map[string]any{}})
}

func caIssuer(namespace, name, secretName string) *unstructured.Unstructured {
	return newObject(certmanager.IssuerGVK, namespace, name, map[string]any{"ca": map[string]any{"secretName": secretName}})
}

// certificate is a Certificate issued into a Secret of its name by issuer, with fields added to
// its spec.
func certificate(namespace, name, issuer string, fields map[string]any) *unstructured.Unstructured {
	spec := map[string]any{"secretName": name, "issuerRef": map[string]any{"name": issuer}}
	for k, v := range fields {
		spec[k] = v
	}
	return newObject(certmanager.CertificateGVK, namespace, name, spec)
}

// caChain makes, in a new namespace, what a provider's webhook certificate needs: a selfSigned
// Issuer, a CA Certificate "ca" it signs, and a ca Issuer "ca" that signs with it.
func caChain(t *testing.T, namespace string) {
	t.Helper()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		selfSignedIssuer(namespace, "selfsigned"),
		certificate(namespace, "ca", "selfsigned", map[string]any{"isCA": true, "commonName": namespace + "-ca"}),
		caIssuer(namespace, "ca", "ca"))
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(t.Context(), o); err != nil {
			t.Fatalf("failed to create %T %s: %v", o, client.ObjectKeyFromObject(o), err)
		}
	}
}

func get(t *testing.T, gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	u := newObject(gvk, namespace, name, nil)
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(u), u); err != nil {
		t.Fatal(err)
	}
	return u
}

// ready returns the Ready condition of a cert-manager object.
func ready(u *unstructured.Unstructured) (metav1.Condition, bool) {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range raw {
		m, _ := c.(map[string]any)
		if m["type"] == certmanager.ConditionReady {
			return metav1.Condition{Type: certmanager.ConditionReady, Status: metav1.ConditionStatus(fmt.Sprint(m["status"])),
				Reason: fmt.Sprint(m["reason"]), Message: fmt.Sprint(m["message"])}, true
		}
	}
	return metav1.Condition{}, false
}

// waitReady waits until a cert-manager object's Ready condition has the status and reason, and
// returns the object.
func waitReady(t *testing.T, gvk schema.GroupVersionKind, namespace, name string, status metav1.ConditionStatus, reason string) *unstructured.Unstructured {
	t.Helper()
	var u *unstructured.Unstructured
	envtest.Eventually(t, 30*time.Second, fmt.Sprintf("%s %s/%s Ready %s %s", gvk.Kind, namespace, name, status, reason), func() error {
		u = newObject(gvk, namespace, name, nil)
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(u), u); err != nil {
			return err
		}
		if c, ok := ready(u); !ok || c.Status != status || c.Reason != reason {
			return fmt.Errorf("Ready is %+v", c)
		}
		return nil
	})
	return u
}

func secret(t *testing.T, namespace, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// leaf parses the certificate of an issued Secret, checks that the Secret has tls.crt, tls.key
// and ca.crt, and that the certificate verifies against ca.crt now.
func leaf(t *testing.T, s *corev1.Secret) *x509.Certificate {
	t.Helper()
	for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey, certmanager.KeyCA} {
		if len(s.Data[k]) == 0 {
			t.Fatalf("Secret %s/%s has no %s", s.Namespace, s.Name, k)
		}
	}
	kp, err := pki.ParseKeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(s.Data[certmanager.KeyCA]) {
		t.Fatalf("Secret %s/%s: ca.crt holds no certificate", s.Namespace, s.Name)
	}
	if _, err := kp.Cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: clk.Now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Fatalf("Secret %s/%s: the certificate does not verify against ca.crt: %v", s.Namespace, s.Name, err)
	}
	return kp.Cert
}

// statusTime reads a time of a Certificate's status.
func statusTime(t *testing.T, u *unstructured.Unstructured, field string) time.Time {
	t.Helper()
	s, _, _ := unstructured.NestedString(u.Object, "status", field)
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("status.%s %q: %v", field, s, err)
	}
	return v
}

// waitEvent waits for an events.k8s.io Event of the type and reason about the named object whose
// note satisfies match, and returns its note.
func waitEvent(t *testing.T, namespace, name, typ, reason string, match func(string) bool) string {
	t.Helper()
	var note string
	envtest.Eventually(t, 10*time.Second, fmt.Sprintf("a %s Event %s about %s/%s", typ, reason, namespace, name), func() error {
		notes := eventNotes(t, namespace, name, typ, reason)
		if i := slices.IndexFunc(notes, match); i >= 0 {
			note = notes[i]
			return nil
		}
		return fmt.Errorf("notes: %q", notes)
	})
	return note
}

// eventNotes lists the notes of the Events of the type and reason about the named object.
func eventNotes(t *testing.T, namespace, name, typ, reason string) []string {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := env.Client.List(t.Context(), list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Type == typ && e.Reason == reason {
			notes = append(notes, e.Note)
		}
	}
	return notes
}
