package components

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/pki"
)

// webhookCerts is how a component's webhook server gets its certificate when its manifests do
// not mount one: as TKG's managers do, it makes its own CA and serving certificate for the
// webhook Service at start, and keeps the caBundle of its webhook configurations pointing at
// that CA.
type webhookCerts struct {
	service, namespace string
	// configurations are the names of the Mutating- and ValidatingWebhookConfigurations whose
	// webhooks call the service, and of the CustomResourceDefinitions whose conversion webhook
	// does.
	configurations []string
	caPEM          []byte
	// injected is set once every configuration's caBundle has been set: until then the
	// API server cannot call the webhooks, and the component is not ready.
	injected atomic.Bool
}

// write generates the certificates into dir, as tls.crt and tls.key.
func (w *webhookCerts) write(dir string) error {
	ca, err := pki.NewCA(w.service + "-ca")
	if err != nil {
		return err
	}
	host := w.service + "." + w.namespace + ".svc"
	serving, err := ca.Issue(pki.CertSpec{CommonName: host, DNSNames: []string{host, host + ".cluster.local"}, Usages: pki.ServerUsage})
	if err != nil {
		return err
	}
	key, err := serving.KeyPEM()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), serving.CertPEM(), 0o600); err != nil {
		return err
	}
	w.caPEM = ca.CertPEM()
	return os.WriteFile(filepath.Join(dir, "tls.key"), key, 0o600)
}

// Start keeps the caBundle of the configurations' webhooks that call the service set to the CA:
// every second until all are set, since the configurations may be applied after the component
// starts, then every five.
func (w *webhookCerts) Start(ctx context.Context, c client.Client) {
	log := ctrl.LoggerFrom(ctx).WithName("webhook-certs")
	for {
		all := true
		for _, name := range w.configurations {
			if err := w.inject(ctx, c, name); err != nil {
				all = false
				log.Info("Webhook configuration not updated yet", "name", name, "reason", err.Error())
			}
		}
		if all {
			w.injected.Store(true)
		}
		interval := 5 * time.Second
		if !w.injected.Load() {
			interval = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// ready reports, as a health check, whether the webhooks can be called.
func (w *webhookCerts) ready(*http.Request) error {
	if !w.injected.Load() {
		return fmt.Errorf("the caBundle of %s is not set yet", strings.Join(w.configurations, ", "))
	}
	return nil
}

func (w *webhookCerts) inject(ctx context.Context, c client.Client, name string) error {
	for _, obj := range []client.Object{&admissionregistrationv1.MutatingWebhookConfiguration{}, &admissionregistrationv1.ValidatingWebhookConfiguration{}, &apiextensionsv1.CustomResourceDefinition{}} {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
		changed := false
		for _, cc := range clientConfigs(obj) {
			changed = w.set(cc) || changed
		}
		if !changed {
			return nil
		}
		return c.Patch(ctx, obj, patch)
	}
	return fmt.Errorf("no Mutating- or ValidatingWebhookConfiguration or CustomResourceDefinition %s", name)
}

// clientConfig is where a webhook is called: the service it calls and its caBundle.
type clientConfig struct {
	service, namespace string
	caBundle           *[]byte
}

// clientConfigs returns the client configurations of a webhook configuration's webhooks or of
// a CRD's conversion webhook.
func clientConfigs(obj client.Object) []clientConfig {
	var out []clientConfig
	admission := func(cc *admissionregistrationv1.WebhookClientConfig) {
		if cc.Service != nil {
			out = append(out, clientConfig{service: cc.Service.Name, namespace: cc.Service.Namespace, caBundle: &cc.CABundle})
		}
	}
	switch o := obj.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for i := range o.Webhooks {
			admission(&o.Webhooks[i].ClientConfig)
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for i := range o.Webhooks {
			admission(&o.Webhooks[i].ClientConfig)
		}
	case *apiextensionsv1.CustomResourceDefinition:
		if c := o.Spec.Conversion; c != nil && c.Webhook != nil && c.Webhook.ClientConfig != nil && c.Webhook.ClientConfig.Service != nil {
			cc := c.Webhook.ClientConfig
			out = append(out, clientConfig{service: cc.Service.Name, namespace: cc.Service.Namespace, caBundle: &cc.CABundle})
		}
	}
	return out
}

// set points a webhook that calls the service at the CA and reports whether it changed.
func (w *webhookCerts) set(cc clientConfig) bool {
	if cc.service != w.service || cc.namespace != w.namespace || bytes.Equal(*cc.caBundle, w.caPEM) {
		return false
	}
	*cc.caBundle = w.caPEM
	return true
}

// parseList splits a comma-separated flag value.
func parseList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
