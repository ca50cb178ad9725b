package cluster

import (
	"context"
	"fmt"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// nodeRuntime is what the nodes of a Cluster of the local provider are, as the provider decides
// it: what the Cluster's annotations choose or, without a choice, what its management cluster's
// are (the management Cluster's own choice; the node agent's when it made none). It is empty
// when there is no management Cluster (a bootstrap cluster's provider decides by its own nodes).
func nodeRuntime(ctx context.Context, c client.Client, annotations map[string]string) (string, error) {
	if v := annotations[infrav1.NodeRuntimeAnnotation]; v != "" {
		return v, nil
	}
	list := &clusterv1.ClusterList{}
	if err := c.List(ctx, list, client.HasLabels{tkg.LabelManagementCluster}); err != nil {
		return "", fmt.Errorf("failed to list the management Cluster: %w", err)
	}
	if len(list.Items) == 0 {
		return "", nil
	}
	for _, mc := range list.Items {
		if mc.Annotations[infrav1.NodeRuntimeAnnotation] == infrav1.NodeRuntimeReal {
			return infrav1.NodeRuntimeReal, nil
		}
	}
	return infrav1.NodeRuntimeAgent, nil
}

// checkLocalHost asks check (nil for none) whether this host can start the control-plane
// machines and workers a Cluster of the local provider with annotations gains, counted as the
// nodes of its runtime; as real nodes, which take more, when that is not known.
func checkLocalHost(ctx context.Context, c client.Client, annotations map[string]string, check HostCheck, p *progress.Printer, controlPlanes, workers int) error {
	if check == nil || controlPlanes+workers == 0 {
		return nil
	}
	runtime, err := nodeRuntime(ctx, c, annotations)
	if err != nil {
		return err
	}
	return check(p, runtime != infrav1.NodeRuntimeAgent, controlPlanes, workers)
}
