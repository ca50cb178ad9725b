package managementcluster

import (
	"context"
	"fmt"
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Upgrade is a planned upgrade of the management cluster: the release it moves to, and the TKG
// version it keeps (slipway has one: its providers and management packages stay as they are).
type Upgrade struct {
	cluster.Upgrade
	TKGVersion string
}

// PlanUpgrade chooses the release the management cluster upgrades to, as cluster.PlanUpgrade
// does for a workload cluster, and reads its TKG version.
func PlanUpgrade(ctx context.Context, c client.Client, name, tkr string) (*Upgrade, error) {
	key := client.ObjectKey{Namespace: tkg.SystemNamespace, Name: name}
	u, err := cluster.PlanUpgrade(ctx, c, key, tkr)
	if err != nil {
		return nil, err
	}
	mc := &clusterv1.Cluster{}
	if err := c.Get(ctx, key, mc); err != nil {
		return nil, fmt.Errorf("failed to get management Cluster %s: %w", key, err)
	}
	return &Upgrade{Upgrade: *u, TKGVersion: mc.Annotations[tkg.AnnotationTKGVersion]}, nil
}

// Prompt is TKG's question before the upgrade.
func (u *Upgrade) Prompt(name string) string {
	return fmt.Sprintf("Upgrading management cluster '%s' to TKG version '%s' with Kubernetes version '%s'. Are you sure?", name, u.TKGVersion, u.Kubernetes)
}

// RunUpgrade upgrades the management cluster's Kubernetes as a workload cluster's, with TKG's
// lines around the waits. Its own controllers do it: they run on the machines it replaces.
func RunUpgrade(ctx context.Context, c client.Client, name string, u *Upgrade, timeout time.Duration, p *progress.Printer) error {
	p.Infof("Upgrading management cluster kubernetes version...")
	if err := cluster.RunUpgrade(ctx, c, client.ObjectKey{Namespace: tkg.SystemNamespace, Name: name}, &u.Upgrade, timeout, p); err != nil {
		return err
	}
	p.Infof("Management cluster '%s' successfully upgraded to TKG version '%s' with kubernetes version '%s'", name, u.TKGVersion, u.Kubernetes)
	return nil
}
