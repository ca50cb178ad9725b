package cluster

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/slipway-dev/slipway/internal/kubeconfig"
)

// ContextName is the kubeconfig context of a local cluster, as kind names its kind-NAME.
func ContextName(cluster string) string { return "slipway-" + cluster }

// Kubeconfig returns the administrator kubeconfig of a cluster with its entries named
// slipway-NAME.
func (s Store) Kubeconfig(name string) (*clientcmdapi.Config, error) {
	spec, err := s.Get(name)
	if err != nil {
		return nil, err
	}
	if spec.Owner != nil && spec.Owner.VCenter != "" {
		return nil, fmt.Errorf("local cluster %q is made of the VMs of Cluster %s on the vCenter simulator at %s: its kubeconfig is on the Cluster's management cluster; `slipway cluster kubeconfig get %s --admin` saves it",
			name, spec.Owner.Name, spec.Owner.VCenter, spec.Owner.Name)
	}
	if spec.Owner != nil {
		// Cluster API keeps the kubeconfig of the clusters it made, on their management cluster.
		return nil, fmt.Errorf("local cluster %q belongs to Cluster %s/%s: its kubeconfig is on management cluster %s; `slipway cluster kubeconfig get %s -n %s --admin` saves it",
			name, spec.Owner.Namespace, spec.Owner.Name, spec.Owner.ManagementCluster, spec.Owner.Name, spec.Owner.Namespace)
	}
	dirs, err := s.Dirs(name)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.LoadFromFile(dirs.Kubeconfig())
	if err != nil {
		return nil, fmt.Errorf("failed to read the kubeconfig of %s: %w", name, err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil {
		return nil, fmt.Errorf("the kubeconfig of %s has no current context", name)
	}
	n := ContextName(name)
	return &clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{n: cfg.Clusters[ctx.Cluster]},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{n: cfg.AuthInfos[ctx.AuthInfo]},
		Contexts:       map[string]*clientcmdapi.Context{n: {Cluster: n, AuthInfo: n}},
		CurrentContext: n,
	}, nil
}

// MergeKubeconfig adds the cluster's context to the kubeconfig at path and makes it current.
func (s Store) MergeKubeconfig(name, path string) error {
	add, err := s.Kubeconfig(name)
	if err != nil {
		return err
	}
	return kubeconfig.Merge(path, add, ContextName(name))
}

// RemoveFromKubeconfig removes the cluster's context from the kubeconfig at path.
func RemoveFromKubeconfig(name, path string) error {
	return kubeconfig.RemoveContext(path, ContextName(name))
}
