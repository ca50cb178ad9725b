package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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

// MergeKubeconfig adds a kubeconfig's clusters, users and contexts to the file at path, leaving
// its current context as it is, as TKG saves credentials.
func MergeKubeconfig(path string, add *clientcmdapi.Config) error {
	existing, err := clientcmd.LoadFromFile(path)
	if errors.Is(err, os.ErrNotExist) {
		existing = clientcmdapi.NewConfig()
	} else if err != nil {
		return fmt.Errorf("failed to read kubeconfig %s: %w", path, err)
	}
	for k, v := range add.Clusters {
		existing.Clusters[k] = v
	}
	for k, v := range add.AuthInfos {
		existing.AuthInfos[k] = v
	}
	for k, v := range add.Contexts {
		existing.Contexts[k] = v
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*existing, path)
}
