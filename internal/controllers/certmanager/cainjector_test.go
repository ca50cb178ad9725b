package certmanager_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/controllers/certmanager"
	"github.com/slipway-dev/slipway/internal/pki"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

func TestInjectsCAFromCertificatesAndSecrets(t *testing.T) {
	const ns = "inject"
	ca, err := pki.NewCA("direct")
	if err != nil {
		t.Fatal(err)
	}
	direct := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "direct"}, Data: map[string][]byte{certmanager.KeyCA: ca.CertPEM()}}
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, selfSignedIssuer(ns, "selfsigned"),
		certificate(ns, "serving", "selfsigned", map[string]any{"dnsNames": []any{"webhook-service.inject.svc"}}),
		injectInto("inject-from-certificate", map[string]string{certmanager.AnnotationInjectCAFrom: ns + "/serving"}, 2),
		injectInto("inject-from-secret", map[string]string{certmanager.AnnotationInjectCAFromSecret: ns + "/direct"}, 1),
		conversionWebhook(map[string]string{certmanager.AnnotationInjectCAFrom: ns + "/serving"}),
		direct)
	waitReady(t, certmanager.CertificateGVK, ns, "serving", metav1.ConditionTrue, certmanager.ReasonReady)
	serving := secret(t, ns, "serving").Data[certmanager.KeyCA]

	waitInjected(t, "inject-from-certificate", serving)
	waitInjected(t, "inject-from-secret", ca.CertPEM())
	envtest.Eventually(t, 30*time.Second, "the CRD's conversion webhook given the Certificate's CA", func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: "widgets.inject.slipway.dev"}, crd); err != nil {
			return err
		}
		if !bytes.Equal(crd.Spec.Conversion.Webhook.ClientConfig.CABundle, serving) {
			return fmt.Errorf("caBundle is %q", crd.Spec.Conversion.Webhook.ClientConfig.CABundle)
		}
		return nil
	})
	waitEvent(t, metav1.NamespaceDefault, "inject-from-certificate", corev1.EventTypeNormal, certmanager.ReasonInjectedCA, func(n string) bool {
		return n == "Injected the CA of Certificate inject/serving into 2 caBundle(s)"
	})

	// A new CA in the Secret is injected again.
	next, err := pki.NewCA("direct-next")
	if err != nil {
		t.Fatal(err)
	}
	direct.Data[certmanager.KeyCA] = next.CertPEM()
	if err := env.Client.Update(t.Context(), direct); err != nil {
		t.Fatal(err)
	}
	waitInjected(t, "inject-from-secret", next.CertPEM())
	envtest.Eventually(t, 10*time.Second, "two injections told", func() error {
		if n := len(eventNotes(t, metav1.NamespaceDefault, "inject-from-secret", corev1.EventTypeNormal, certmanager.ReasonInjectedCA)); n != 2 {
			return fmt.Errorf("%d Events", n)
		}
		return nil
	})
}

// injectInto is a ValidatingWebhookConfiguration of n webhooks, annotated to be given a CA.
func injectInto(name string, annotations map[string]string, n int) *admissionregistrationv1.ValidatingWebhookConfiguration {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
	for i := range n {
		vwc.Webhooks = append(vwc.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name:                    fmt.Sprintf("v%d.%s.slipway.dev", i, name),
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "default", Name: "webhook", Path: ptr.To("/validate")}},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			// It selects nothing: envtest runs no webhook server.
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"test.slipway.dev/never": "true"}},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"inject.slipway.dev"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}},
		})
	}
	return vwc
}

// conversionWebhook is a CRD whose conversion webhook is annotated to be given a CA.
func conversionWebhook(annotations map[string]string) *apiextensionsv1.CustomResourceDefinition {
	version := func(name string, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: storage,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.inject.slipway.dev", Annotations: annotations},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "inject.slipway.dev", Scope: apiextensionsv1.NamespaceScoped,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version("v1", true), version("v2", false)},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
				ConversionReviewVersions: []string{"v1"},
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "default", Name: "webhook", Path: ptr.To("/convert")}},
			}},
		},
	}
}

// waitInjected waits until every webhook of a ValidatingWebhookConfiguration has the CA.
func waitInjected(t *testing.T, name string, ca []byte) {
	t.Helper()
	envtest.Eventually(t, 30*time.Second, "CA injected into "+name, func() error {
		vwc := webhookKey(name)
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(vwc), vwc); err != nil {
			return err
		}
		for _, w := range vwc.Webhooks {
			if !bytes.Equal(w.ClientConfig.CABundle, ca) {
				return fmt.Errorf("webhook %s has caBundle %q", w.Name, strings.TrimSpace(string(w.ClientConfig.CABundle)))
			}
		}
		return nil
	})
}

func webhookKey(name string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
