package components

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/scheme"
)

func TestImageName(t *testing.T) {
	for in, want := range map[string]string{
		"registry.k8s.io/cluster-api/cluster-api-controller:v1.13.4":                      "cluster-api-controller",
		"projects.registry.vmware.com/tkg/tanzu_core/addons/addons-controller@sha256:abc": "addons-controller",
		"localhost:5000/addons-controller:v1":                                             "addons-controller",
		"nginx":                                                                           "nginx",
	} {
		if got := ImageName(in); got != want {
			t.Errorf("ImageName(%s) = %s, want %s", in, got, want)
		}
	}
	r := Default()
	if name, ok := r.ComponentFor("projects.registry.vmware.com/tkg/addons-controller:v0.32.0"); !ok || name != "tanzu-addons-manager" {
		t.Errorf("the addons-controller image does not map to the addons manager: %v %v", name, ok)
	}
	if _, ok := r.ComponentFor("nginx:1.27"); ok {
		t.Error("nginx maps to a component")
	}
	if _, err := r.Get("nope"); err == nil {
		t.Error("an unknown component is found")
	}
}

// TestEveryPackagedComponentIsKnown checks that each slipway image a package's lock names runs
// a component: one missing from Default would leave its pod never started.
func TestEveryPackagedComponentIsKnown(t *testing.T) {
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	locks, err := filepath.Glob(filepath.Join(root, "packages", "*", "*", "bundle", ".imgpkg", "images.yml"))
	if err != nil || len(locks) == 0 {
		t.Fatalf("no image locks: %v", err)
	}
	r := Default()
	for _, lock := range locks {
		data, err := os.ReadFile(lock)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			image, ok := strings.CutPrefix(strings.TrimSpace(line), "- image: ghcr.io/slipway-dev/")
			if !ok {
				continue
			}
			if _, ok := r.ComponentFor(image); !ok {
				t.Errorf("%s: image ghcr.io/slipway-dev/%s runs no component", lock, image)
			}
		}
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
	if _, _, err := setupClusterCache(context.Background(), mgr, "test", ""); err != nil {
		t.Fatalf("setupClusterCache: %v", err)
	}
	if err := setConnectionRetry(nil, time.Second); err == nil {
		t.Error("setConnectionRetry accepted a cache without the setter")
	}
}
