package managementcluster

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/tree"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Get reads the management cluster's summary from its own Cluster, the tree of its Cluster API
// objects with their conditions (clusterctl's discovery), and the providers installed.
func Get(ctx context.Context, c client.Client, name string) (*cluster.Summary, *tree.ObjectTree, []unstructured.Unstructured, error) {
	s, t, _, err := cluster.Get(ctx, c, client.ObjectKey{Namespace: tkg.SystemNamespace, Name: name})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("management cluster %s: %w", name, err)
	}
	providers := &unstructured.UnstructuredList{}
	providers.SetAPIVersion("clusterctl.cluster.x-k8s.io/v1alpha3")
	providers.SetKind("ProviderList")
	if err := c.List(ctx, providers); err != nil {
		return nil, nil, nil, fmt.Errorf("listing the providers: %w", err)
	}
	return s, t, providers.Items, nil
}
