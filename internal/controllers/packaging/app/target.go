package app

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/carvel/deploy"
	"github.com/slipway-dev/slipway/internal/controllers/packaging/status"
)

// target returns where the App deploys: the App's cluster as its service account, or the
// cluster of spec.cluster.kubeconfigSecretRef.
func (r *Reconciler) target(ctx context.Context, app *kappctrlv1alpha1.App) (deploy.Target, error) {
	namespace := app.Namespace
	if app.Spec.DefaultNamespace != "" {
		namespace = app.Spec.DefaultNamespace
	}
	for _, d := range app.Spec.Deploy {
		if d.Kapp != nil && d.Kapp.IntoNs != "" {
			namespace = d.Kapp.IntoNs
		}
	}
	switch {
	case app.Spec.Cluster != nil && app.Spec.Cluster.KubeconfigSecretRef != nil:
		cfg, err := r.remoteConfig(ctx, app)
		if err != nil {
			return deploy.Target{}, err
		}
		c, err := client.New(cfg, client.Options{Scheme: r.Client.Scheme()})
		if err != nil {
			return deploy.Target{}, fmt.Errorf("failed to reach the cluster of spec.cluster.kubeconfigSecretRef: %w", err)
		}
		if app.Spec.Cluster.Namespace != "" {
			namespace = app.Spec.Cluster.Namespace
		} else if app.Spec.DefaultNamespace == "" {
			namespace = metav1.NamespaceDefault
		}
		return deploy.Target{Client: c, Namespace: namespace}, nil
	case app.Spec.ServiceAccountName != "":
		cfg, err := r.serviceAccountConfig(ctx, app)
		if err != nil {
			return deploy.Target{}, err
		}
		c, err := client.New(cfg, client.Options{Scheme: r.Client.Scheme(), Mapper: r.Client.RESTMapper()})
		if err != nil {
			return deploy.Target{}, err
		}
		return deploy.Target{Client: c, Namespace: namespace}, nil
	}
	return deploy.Target{}, errors.New("expected spec.serviceAccountName or spec.cluster.kubeconfigSecretRef to be set: the App deploys with that identity")
}

// serviceAccountConfig returns a client configuration that acts as the App's service account,
// so that the App deploys only what the account may.
func (r *Reconciler) serviceAccountConfig(ctx context.Context, app *kappctrlv1alpha1.App) (*rest.Config, error) {
	sa := &corev1.ServiceAccount{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: app.Spec.ServiceAccountName}, sa); err != nil {
		return nil, fmt.Errorf("spec.serviceAccountName: ServiceAccount %s/%s: %w", app.Namespace, app.Spec.ServiceAccountName, err)
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := r.Client.SubResource("token").Create(ctx, sa, req); err != nil {
		return nil, fmt.Errorf("failed to get a token of ServiceAccount %s: %w", klog.KObj(sa), err)
	}
	cfg := rest.AnonymousClientConfig(r.Config)
	cfg.BearerToken = req.Status.Token
	return cfg, nil
}

// remoteConfig reads the kubeconfig of spec.cluster.kubeconfigSecretRef (key "value" by default).
func (r *Reconciler) remoteConfig(ctx context.Context, app *kappctrlv1alpha1.App) (*rest.Config, error) {
	ref := app.Spec.Cluster.KubeconfigSecretRef
	key := ref.Key
	if key == "" {
		key = "value"
	}
	s := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: ref.Name}, s); err != nil {
		return nil, fmt.Errorf("spec.cluster.kubeconfigSecretRef: Secret %s/%s: %w", app.Namespace, ref.Name, err)
	}
	data, ok := s.Data[key]
	if !ok {
		return nil, fmt.Errorf("spec.cluster.kubeconfigSecretRef: Secret %s/%s has no key %q", app.Namespace, ref.Name, key)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("spec.cluster.kubeconfigSecretRef: Secret %s/%s: %w", app.Namespace, ref.Name, err)
	}
	// kapp's own default is 1000 requests a second; the other cluster's priority and fairness
	// limits them.
	cfg.QPS = -1
	return cfg, nil
}

// equalStatus ignores timestamps, so that a converged App is not rewritten on every sync.
func equalStatus(a, b kappctrlv1alpha1.AppStatus) bool {
	strip := func(s kappctrlv1alpha1.AppStatus) kappctrlv1alpha1.AppStatus {
		s = *s.DeepCopy()
		status.Stages{Fetch: s.Fetch, Template: s.Template, Deploy: s.Deploy, Successes: &s.ConsecutiveReconcileSuccesses}.ClearTimes()
		return s
	}
	return reflect.DeepEqual(strip(a), strip(b))
}
