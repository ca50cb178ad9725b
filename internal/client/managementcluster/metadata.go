package managementcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/client/initregion"
	"github.com/slipway-dev/slipway/internal/progress"
)

// Where TKG publishes what a management cluster is, for anyone authenticated to read.
const (
	MetadataNamespace = "tkg-system-public"
	// MetadataConfigMap holds metadata.yaml, the cluster's ClusterMetadata.
	MetadataConfigMap = "tkg-metadata"
	// BOMConfigMapPrefix and the TKG version name the ConfigMap holding the release's bom.yaml.
	BOMConfigMapPrefix = "tkg-bom-"
	metadataReader     = "tkg-metadata-reader"
)

// ClusterMetadata is metadata.yaml of the tkg-metadata ConfigMap, in TKG's shape.
type ClusterMetadata struct {
	Cluster struct {
		Name               string `json:"name"`
		Type               string `json:"type"`
		Plan               string `json:"plan"`
		KubernetesProvider string `json:"kubernetesProvider"`
		TKGVersion         string `json:"tkgVersion"`
		Edition            string `json:"edition"`
		Infrastructure     struct {
			Provider string `json:"provider"`
		} `json:"infrastructure"`
		IsClusterClassBased bool `json:"isClusterClassBased"`
	} `json:"cluster"`
	BOM struct {
		ConfigMapRef struct {
			Name string `json:"name"`
		} `json:"configmapRef"`
	} `json:"bom"`
}

// Metadata is what PublishMetadata writes of a management cluster.
type Metadata struct {
	Name, Plan, InfrastructureProvider string
	BOM                                *initregion.BOM
}

// PublishMetadata writes, as TKG does at the end of a management cluster's create and upgrade
// ("Creating tkg-bom versioned ConfigMaps..."), the release's bill of materials as
// tkg-bom-<TKG version> and the cluster's tkg-metadata in tkg-system-public, with a Role letting
// every authenticated user read both. TKG's Role names the unversioned tkg-bom, which no
// ConfigMap has; slipway's names the ConfigMap it writes.
func PublishMetadata(ctx context.Context, c client.Client, m Metadata) error {
	bomName := BOMConfigMapPrefix + m.BOM.Release.Version
	bom, err := yaml.Marshal(m.BOM)
	if err != nil {
		return err
	}
	md := ClusterMetadata{}
	md.Cluster.Name, md.Cluster.Type, md.Cluster.Plan = m.Name, "management", m.Plan
	md.Cluster.KubernetesProvider = "VMware Tanzu Kubernetes Grid"
	md.Cluster.TKGVersion, md.Cluster.Edition = m.BOM.Release.Version, "tkg"
	md.Cluster.Infrastructure.Provider = m.InfrastructureProvider
	md.Cluster.IsClusterClassBased = true
	md.BOM.ConfigMapRef.Name = bomName
	metadata, err := yaml.Marshal(md)
	if err != nil {
		return err
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: MetadataNamespace}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: MetadataNamespace, Name: metadataReader}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: MetadataNamespace, Name: metadataReader}}
	bomMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: MetadataNamespace, Name: bomName}}
	metadataMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: MetadataNamespace, Name: MetadataConfigMap}}
	for _, w := range []struct {
		what   string
		obj    client.Object
		mutate func()
	}{
		{"Namespace " + MetadataNamespace, ns, func() {}},
		{"Role " + metadataReader, role, func() {
			role.Rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
				ResourceNames: []string{MetadataConfigMap, bomName}, Verbs: []string{"get", "list", "watch"}}}
		}},
		{"RoleBinding " + metadataReader, binding, func() {
			binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: metadataReader}
			binding.Subjects = []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:authenticated"}}
		}},
		{"ConfigMap " + bomName, bomMap, func() { bomMap.Data = map[string]string{"bom.yaml": string(bom)} }},
		{"ConfigMap " + MetadataConfigMap, metadataMap, func() { metadataMap.Data = map[string]string{"metadata.yaml": string(metadata)} }},
	} {
		if _, err := controllerutil.CreateOrUpdate(ctx, c, w.obj, func() error { w.mutate(); return nil }); err != nil {
			return fmt.Errorf("failed to write %s: %w", w.what, err)
		}
	}
	return nil
}

// publishMetadata publishes the management cluster's metadata as TKG does at the end of a create
// or an upgrade (done says which): a failure is a warning, since the cluster itself is done.
func publishMetadata(ctx context.Context, p *progress.Printer, c client.Client, repo *initregion.Repository, name, plan, infrastructure, done string) {
	p.Infof("Creating tkg-bom versioned ConfigMaps...")
	bom, err := repo.BOM(assets.DefaultKubernetesVersion())
	if err == nil {
		err = PublishMetadata(ctx, c, Metadata{Name: name, Plan: plan, InfrastructureProvider: infrastructure, BOM: bom})
	}
	if err != nil {
		p.Infof("Warning: Management cluster is %s successfully, but the tkg-bom versioned ConfigMaps creation is failing. %v", done, err)
	}
}
