package managementcluster

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/controllers/addons/clustermetadata"
	"github.com/slipway-dev/slipway/internal/progress"
)

// Metadata is what PublishMetadata writes of a management cluster.
type Metadata struct {
	Name, Plan, InfrastructureProvider string
	BOM                                *BOM
}

// PublishMetadata writes, as TKG does at the end of a management cluster's create and upgrade
// ("Creating tkg-bom versioned ConfigMaps..."), the release's bill of materials as
// tkg-bom-<TKG version> and the cluster's tkg-metadata in tkg-system-public, readable by every
// authenticated user. TKG's Role names the unversioned tkg-bom, which no ConfigMap of a
// management cluster has; slipway's names the ConfigMap it writes.
func PublishMetadata(ctx context.Context, c client.Client, m Metadata) error {
	bom, err := yaml.Marshal(m.BOM)
	if err != nil {
		return err
	}
	md := &clustermetadata.Metadata{}
	md.Cluster.Name, md.Cluster.Type, md.Cluster.Plan = m.Name, clustermetadata.TypeManagement, m.Plan
	md.Cluster.KubernetesProvider = clustermetadata.KubernetesProvider
	md.Cluster.TKGVersion, md.Cluster.Edition = m.BOM.Release.Version, "tkg"
	md.Cluster.Infrastructure.Provider = m.InfrastructureProvider
	md.Cluster.IsClusterClassBased = true
	md.BOM.ConfigMapRef.Name = clustermetadata.BOMConfigMapPrefix + m.BOM.Release.Version
	_, err = clustermetadata.Publish(ctx, c, md, bom)
	return err
}

// publishMetadata publishes the management cluster's metadata as TKG does at the end of a create
// or an upgrade (done says which): a failure is a warning, since the cluster itself is done.
func publishMetadata(ctx context.Context, p *progress.Printer, c client.Client, repo *Repository, name, plan, infrastructure, done string) {
	p.Infof("Creating tkg-bom versioned ConfigMaps...")
	bom, err := repo.BOM(assets.DefaultKubernetesVersion())
	if err == nil {
		err = PublishMetadata(ctx, c, Metadata{Name: name, Plan: plan, InfrastructureProvider: infrastructure, BOM: bom})
	}
	if err != nil {
		p.Infof("Warning: Management cluster is %s successfully, but the tkg-bom versioned ConfigMaps creation is failing. %v", done, err)
	}
}
