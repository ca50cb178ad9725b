package components

import (
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/scheme"
)

func TestGet(t *testing.T) {
	r := Default()
	if c, err := r.Get("tanzu-addons-manager"); err != nil || c.Run == nil {
		t.Errorf("the addons manager is not known: %v", err)
	}
	if _, err := r.Get("nope"); err == nil || !strings.Contains(err.Error(), "stand-in") {
		t.Errorf("an unknown component: %v", err)
	}
}

// TestReleaseConversionIsServed checks that the conversion webhook's type is convertible, so
// the builder registers /convert.
func TestReleaseConversionIsServed(t *testing.T) {
	ok, err := conversion.IsConvertible(scheme.New(), &runv1alpha3.TanzuKubernetesRelease{})
	if err != nil || !ok {
		t.Fatalf("TanzuKubernetesRelease is not convertible: %v %v", ok, err)
	}
}

// TestCABundleOfConversionWebhook checks that the webhook certificates reach a CRD's conversion
// webhook that calls the service, and no other.
func TestCABundleOfConversionWebhook(t *testing.T) {
	w := &webhookCerts{service: "svc", namespace: "ns", caPEM: []byte("ca")}
	crd := func(service string) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Conversion: &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{
				Service: &apiextensionsv1.ServiceReference{Name: service, Namespace: "ns"},
			}},
		}}}
	}
	ours, other := crd("svc"), crd("other")
	for _, cc := range clientConfigs(ours) {
		w.set(cc)
	}
	for _, cc := range clientConfigs(other) {
		w.set(cc)
	}
	if got := string(ours.Spec.Conversion.Webhook.ClientConfig.CABundle); got != "ca" {
		t.Errorf("caBundle of the service's CRD = %q, want ca", got)
	}
	if got := other.Spec.Conversion.Webhook.ClientConfig.CABundle; got != nil {
		t.Errorf("caBundle of another service's CRD = %q, want none", got)
	}
	if got := clientConfigs(&apiextensionsv1.CustomResourceDefinition{}); len(got) != 0 {
		t.Errorf("a CRD without conversion has client configs: %v", got)
	}
}

// TestClusterCacheRetryIsSet checks that the cluster cache's connection retry interval can still
// be set: Cluster API offers it outside its ClusterCache interface, so an upgrade may take it away.
func TestClusterCacheRetryIsSet(t *testing.T) {
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme: scheme.New(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := setupClusterCache(t.Context(), mgr, "test", ""); err != nil {
		t.Fatalf("setupClusterCache: %v", err)
	}
	if err := setConnectionRetry(nil, time.Second); err == nil {
		t.Error("setConnectionRetry accepted a cache without the setter")
	}
}
