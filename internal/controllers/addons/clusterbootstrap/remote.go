package clusterbootstrap

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// remoteClients keeps one client per workload cluster, made from its kubeconfig Secret and made
// again when the Secret changes.
type remoteClients struct {
	scheme *runtime.Scheme
	mu     sync.Mutex
	byKey  map[types.NamespacedName]remoteClient
}

type remoteClient struct {
	resourceVersion string
	client          client.Client
}

// get returns a client of the cluster, from its {cluster}-kubeconfig Secret.
func (r *remoteClients) get(ctx context.Context, c client.Client, cluster *clusterv1.Cluster) (client.Client, error) {
	s := &corev1.Secret{}
	key := client.ObjectKey{Namespace: cluster.Namespace, Name: secret.Name(cluster.Name, secret.Kubeconfig)}
	if err := c.Get(ctx, key, s); err != nil {
		return nil, fmt.Errorf("failed to read the kubeconfig Secret %s: %w", key, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id := client.ObjectKeyFromObject(cluster)
	if rc, ok := r.byKey[id]; ok && rc.resourceVersion == s.ResourceVersion {
		return rc.client, nil
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[secret.KubeconfigDataName])
	if err != nil {
		return nil, fmt.Errorf("kubeconfig Secret %s: %w", key, err)
	}
	rc, err := client.New(cfg, client.Options{Scheme: r.scheme})
	if err != nil {
		return nil, fmt.Errorf("failed to make a client of cluster %s: %w", id, err)
	}
	if r.byKey == nil {
		r.byKey = map[types.NamespacedName]remoteClient{}
	}
	r.byKey[id] = remoteClient{resourceVersion: s.ResourceVersion, client: rc}
	return rc, nil
}

// forget drops the client of a deleted cluster.
func (r *remoteClients) forget(cluster *clusterv1.Cluster) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byKey, client.ObjectKeyFromObject(cluster))
}
