package fetch

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/registrytrust"
)

// The configuration objects whose registry trust ConfigTrust reads: kapp-controller's Secret and
// the TKR source's ConfigMap, each in its controller's namespace.
const (
	KappControllerConfig = "kapp-controller-config"
	TKRControllerConfig  = "tkr-controller-config"
)

// ConfigTrust is the registry trust a controller's configuration object gives, read on each
// use, as kapp-controller reads its kapp-controller-config Secret (caCerts,
// dangerousSkipTLSVerify) and TKG's tkr-source-controller its tkr-controller-config ConfigMap
// (caCerts). A missing object trusts the system's CAs only. The transport is kept while the
// configuration is unchanged, so that its connections are reused.
type ConfigTrust struct {
	Client client.Reader
	Key    client.ObjectKey
	// Secret says the configuration is a Secret; else it is a ConfigMap.
	Secret bool
	// SkipVerify are hosts not verified besides those the configuration names (a flag's).
	SkipVerify []string

	mu        sync.Mutex
	last      registrytrust.Trust
	transport http.RoundTripper
}

// Transport returns the transport of the configuration as it is now; nil when there is none
// or it adds nothing (go-containerregistry's default).
func (t *ConfigTrust) Transport(ctx context.Context) (http.RoundTripper, error) {
	if t == nil {
		return nil, nil
	}
	trust, err := t.Trust(ctx)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.transport != nil && trust.CACerts == t.last.CACerts && fmt.Sprint(trust.SkipVerify) == fmt.Sprint(t.last.SkipVerify) {
		return t.transport, nil
	}
	transport, err := trust.Transport()
	if err != nil {
		return nil, fmt.Errorf("%s %s, key caCerts: %w: give the registry's CA certificates as PEM", t.kind(), t.Key, err)
	}
	if old, ok := t.transport.(interface{ CloseIdleConnections() }); ok {
		old.CloseIdleConnections()
	}
	t.last, t.transport = trust, transport
	return transport, nil
}

func (t *ConfigTrust) kind() string {
	if t.Secret {
		return "Secret"
	}
	return "ConfigMap"
}

// Trust reads the configuration's trust: its caCerts and dangerousSkipTLSVerify keys.
func (t *ConfigTrust) Trust(ctx context.Context) (registrytrust.Trust, error) {
	if t.Client == nil {
		return registrytrust.Trust{SkipVerify: t.SkipVerify}, nil
	}
	var obj client.Object = &corev1.ConfigMap{}
	if t.Secret {
		obj = &corev1.Secret{}
	}
	err := t.Client.Get(ctx, t.Key, obj)
	if apierrors.IsNotFound(err) {
		return registrytrust.Trust{SkipVerify: slices.Clone(t.SkipVerify)}, nil
	} else if err != nil {
		return registrytrust.Trust{}, fmt.Errorf("failed to read the registry trust of %s %s: %w", t.kind(), t.Key, err)
	}
	data := map[string]string{}
	switch o := obj.(type) {
	case *corev1.Secret:
		for k, v := range o.Data {
			data[k] = string(v)
		}
		for k, v := range o.StringData {
			data[k] = v
		}
	case *corev1.ConfigMap:
		data = o.Data
	}
	return registrytrust.Trust{CACerts: data["caCerts"], SkipVerify: append(slices.Clone(t.SkipVerify), registrytrust.Hosts(data["dangerousSkipTLSVerify"])...)}, nil
}
