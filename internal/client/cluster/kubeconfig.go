package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AdminKubeconfig reads a cluster's admin kubeconfig from the Secret Cluster API writes (its
// context is NAME-admin@NAME). Without that Secret it says which is the case: no such cluster,
// or a cluster whose Secret is not written yet.
func AdminKubeconfig(ctx context.Context, c client.Client, key client.ObjectKey) (*clientcmdapi.Config, error) {
	s := &corev1.Secret{}
	name := secret.Name(key.Name, secret.Kubeconfig)
	if err := c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: name}, s); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the kubeconfig of cluster %s: %w", key.Name, err)
		}
		if _, err := getCluster(ctx, c, key); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("cluster %s has no kubeconfig yet: its control-plane provider writes it, in the Secret %s, once the cluster's infrastructure is provisioned",
			key.Name, name)
	}
	cfg, err := clientcmd.Load(s.Data[secret.KubeconfigDataName])
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig of cluster %s: %w", key.Name, err)
	}
	return cfg, nil
}
