package cluster

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Delete deletes a workload cluster and waits until it is gone, in two steps (delete, cluster
// gone), saying what holds it when the timeout passes. A management cluster is refused: `management-cluster delete` deletes it.
func Delete(ctx context.Context, c client.Client, key client.ObjectKey, timeout time.Duration, p *progress.Printer) error {
	cl, err := getCluster(ctx, c, key)
	if err != nil {
		return err
	}
	if _, management := cl.Labels[tkg.LabelManagementCluster]; management {
		return fmt.Errorf("cluster %s is the management cluster: `slipway management-cluster delete` deletes it", key.Name)
	}
	return p.Run(ctx,
		progress.NamedStep{Name: "delete", Run: func(ctx context.Context) error {
			if err := c.Delete(ctx, cl); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			p.Infof("Workload cluster '%s' is being deleted ", key.Name)
			return nil
		}},
		progress.NamedStep{Name: "cluster gone", Run: func(ctx context.Context) error {
			if err := WaitGone(ctx, c, key, timeout, p); err != nil {
				return fmt.Errorf("%w; `slipway cluster get %s -n %s` shows what is left, and the deletion goes on", err, key.Name, key.Namespace)
			}
			p.Infof("Workload cluster '%s' deleted", key.Name)
			return nil
		}},
	)
}

// WaitGone waits until a Cluster being deleted is gone, and says what holds it (its finalizers
// and its Deleting condition's message) when the timeout passes or the wait is interrupted.
func WaitGone(ctx context.Context, c client.Client, key client.ObjectKey, timeout time.Duration, p *progress.Printer) error {
	err := Wait{Client: c, Key: key, Timeout: timeout, Progress: p, UntilGone: true}.Until(ctx, func(cl *clusterv1.Cluster) (bool, string) {
		why := fmt.Sprintf("finalizers %v", cl.Finalizers)
		if deleting := conditions.GetMessage(cl, clusterv1.ClusterDeletingCondition); deleting != "" {
			why += "; " + deleting
		}
		return false, why
	})
	if err != nil {
		return fmt.Errorf("cluster %s is not deleted: %w", key.Name, err)
	}
	return nil
}
