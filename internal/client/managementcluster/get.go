package managementcluster

import (
	"context"
	"fmt"

	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/tree"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/client/clusterctl"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Get reads the management cluster's summary from its own Cluster, the tree of its Cluster API
// objects with their conditions (clusterctl's discovery), and the providers installed.
func Get(ctx context.Context, c client.Client, name string, opts cluster.TreeOptions) (*cluster.Summary, *tree.ObjectTree, []clusterctlv1.Provider, error) {
	s, t, _, err := cluster.Get(ctx, c, client.ObjectKey{Namespace: tkg.SystemNamespace, Name: name}, opts)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("management cluster %s: %w", name, err)
	}
	providers, err := clusterctl.InstalledProviders(ctx, c)
	if err != nil {
		return nil, nil, nil, err
	}
	return s, t, providers, nil
}
