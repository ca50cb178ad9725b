package managementcluster

import (
	"context"
	"fmt"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// UpdateCredentials rotates the vSphere credentials of the management cluster as TKG's
// `management-cluster credentials update` does: CAPV's and its own, checked against the
// vCenter first; with cascading, those of every vSphere workload cluster it manages too, a
// failure on one of them said and the others done.
func UpdateCredentials(ctx context.Context, c client.Client, name string, creds cluster.Credentials, cascading bool, p *progress.Printer) error {
	p.Infof("Updating credentials for management cluster %q", name)
	creds.Management = true
	if err := cluster.UpdateVSphereCredentials(ctx, c, client.ObjectKey{Namespace: tkg.SystemNamespace, Name: name}, creds, p); err != nil {
		return err
	}
	if cascading {
		p.Infof("Updating credentials for all workload clusters under management cluster %q", name)
		clusters := &clusterv1.ClusterList{}
		if err := c.List(ctx, clusters); err != nil {
			return fmt.Errorf("unable to update credentials on workload clusters: %w", err)
		}
		creds.Management = false
		for _, wc := range clusters.Items {
			if wc.Namespace == tkg.SystemNamespace && wc.Name == name || wc.Spec.InfrastructureRef.Kind != "VSphereCluster" {
				continue
			}
			p.Infof("Updating credentials for workload cluster %q ...", wc.Name)
			if err := cluster.UpdateVSphereCredentials(ctx, c, client.ObjectKeyFromObject(&wc), creds, p); err != nil {
				p.Infof("Warning: unable to update credentials for workload cluster %q: %v", wc.Name, err)
			}
		}
	}
	p.Infof("Updating credentials for management cluster successful")
	return nil
}
