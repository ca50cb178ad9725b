package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AdminKubeconfig reads a cluster's admin kubeconfig from the Secret Cluster API writes (its
// context is NAME-admin@NAME).
func AdminKubeconfig(ctx context.Context, c client.Client, key client.ObjectKey) (*clientcmdapi.Config, error) {
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: secret.Name(key.Name, secret.Kubeconfig)}, s); err != nil {
		return nil, fmt.Errorf("the kubeconfig of cluster %s: %w", key.Name, err)
	}
	cfg, err := clientcmd.Load(s.Data[secret.KubeconfigDataName])
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig of cluster %s: %w", key.Name, err)
	}
	return cfg, nil
}
