// Package clustermetadata publishes what a cluster is inside the cluster itself, as TKG does:
// in the namespace tkg-system-public, the ConfigMap tkg-metadata (metadata.yaml: the cluster's
// name, type, plan, provider, TKG version and the name of the BOM ConfigMap) and the release's
// bill of materials (bom.yaml), with a Role that lets every authenticated user read both.
//
// Publish writes them; the management cluster's are written by the CLI at the end of a create
// or an upgrade (as tkg-bom-<TKG version>), every workload cluster's by the Reconciler here, TKG's
// ClusterMetadata controller of the addons manager (as tkg-bom, a copy of the management
// cluster's).
package clustermetadata

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"
)

// Where TKG publishes what a cluster is, for anyone authenticated to read.
const (
	Namespace = "tkg-system-public"
	// ConfigMap holds metadata.yaml, the cluster's Metadata.
	ConfigMap = "tkg-metadata"
	// MetadataKey and BOMKey are the keys of the two ConfigMaps.
	MetadataKey = "metadata.yaml"
	BOMKey      = "bom.yaml"
	// BOMConfigMapPrefix and the TKG version name the management cluster's BOM ConfigMap.
	BOMConfigMapPrefix = "tkg-bom-"
	// BOMConfigMap is a workload cluster's BOM ConfigMap.
	BOMConfigMap = "tkg-bom"
	reader       = "tkg-metadata-reader"
)

// Cluster types of Metadata.
const (
	TypeManagement = "management"
	TypeWorkload   = "workload"
)

// KubernetesProvider is Metadata's kubernetesProvider for every cluster slipway makes.
const KubernetesProvider = "VMware Tanzu Kubernetes Grid"

// Metadata is metadata.yaml of the tkg-metadata ConfigMap, in TKG's shape.
type Metadata struct {
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

// Parse reads metadata.yaml.
func Parse(data string) (*Metadata, error) {
	md := &Metadata{}
	if err := yaml.UnmarshalStrict([]byte(data), md); err != nil {
		return nil, fmt.Errorf("%s is not TKG's cluster metadata: %w", MetadataKey, err)
	}
	return md, nil
}

// Publish writes md and the BOM (bom.yaml, as the ConfigMap md names) into the cluster c
// reaches, with the namespace and the Role and RoleBinding that let every authenticated user read
// them. It returns whether anything changed.
func Publish(ctx context.Context, c client.Client, md *Metadata, bom []byte) (bool, error) {
	bomName := md.BOM.ConfigMapRef.Name
	if bomName == "" {
		return false, fmt.Errorf("cluster metadata of %s names no BOM ConfigMap (bom.configmapRef.name)", md.Cluster.Name)
	}
	metadata, err := yaml.Marshal(md)
	if err != nil {
		return false, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: reader}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: reader}}
	bomMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: bomName}}
	metadataMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: ConfigMap}}
	changed := false
	for _, w := range []struct {
		what   string
		obj    client.Object
		mutate func()
	}{
		{"Namespace " + Namespace, ns, func() {}},
		{"Role " + reader, role, func() {
			role.Rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
				ResourceNames: []string{ConfigMap, bomName}, Verbs: []string{"get", "list", "watch"}}}
		}},
		{"RoleBinding " + reader, binding, func() {
			binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: reader}
			binding.Subjects = []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:authenticated"}}
		}},
		{"ConfigMap " + bomName, bomMap, func() { bomMap.Data = map[string]string{BOMKey: string(bom)} }},
		{"ConfigMap " + ConfigMap, metadataMap, func() { metadataMap.Data = map[string]string{MetadataKey: string(metadata)} }},
	} {
		op, err := controllerutil.CreateOrUpdate(ctx, c, w.obj, func() error { w.mutate(); return nil })
		if err != nil {
			return changed, fmt.Errorf("failed to write %s: %w", w.what, err)
		}
		changed = changed || op != controllerutil.OperationResultNone
	}
	return changed, nil
}
