package managementcluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/controllers/addons/clustermetadata"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// TestPublishMetadata publishes a management cluster's metadata twice, as a create and an
// upgrade do: the second replaces the first's, and the Role lets anyone authenticated read
// the ConfigMaps the metadata names.
func TestPublishMetadata(t *testing.T) {
	ctx := t.Context()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	for _, version := range []string{"v2.5.2", "v2.6.0"} {
		bom := &BOM{}
		bom.Release.Version = version
		if err := PublishMetadata(ctx, c, Metadata{Name: "mgmt", Plan: "dev", InfrastructureProvider: "local", BOM: bom}); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: clustermetadata.Namespace, Name: clustermetadata.ConfigMap}, cm); err != nil {
			t.Fatal(err)
		}
		md := &clustermetadata.Metadata{}
		if err := yaml.Unmarshal([]byte(cm.Data["metadata.yaml"]), md); err != nil {
			t.Fatal(err)
		}
		if md.Cluster.Name != "mgmt" || md.Cluster.Type != "management" || md.Cluster.Plan != "dev" || md.Cluster.TKGVersion != version ||
			md.Cluster.Infrastructure.Provider != "local" || !md.Cluster.IsClusterClassBased || md.BOM.ConfigMapRef.Name != "tkg-bom-"+version {
			t.Errorf("%s: metadata.yaml\n%s", version, cm.Data["metadata.yaml"])
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: clustermetadata.Namespace, Name: md.BOM.ConfigMapRef.Name}, cm); err != nil {
			t.Fatalf("%s: the BOM ConfigMap: %v", version, err)
		}
		got := &BOM{}
		if err := yaml.Unmarshal([]byte(cm.Data["bom.yaml"]), got); err != nil || got.Release.Version != version {
			t.Errorf("%s: bom.yaml (%v)\n%s", version, err, cm.Data["bom.yaml"])
		}
		role := &rbacv1.Role{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: clustermetadata.Namespace, Name: "tkg-metadata-reader"}, role); err != nil {
			t.Fatal(err)
		}
		if len(role.Rules) != 1 || len(role.Rules[0].ResourceNames) != 2 || role.Rules[0].ResourceNames[1] != "tkg-bom-"+version {
			t.Errorf("%s: the reader Role's rules %+v", version, role.Rules)
		}
	}
	binding := &rbacv1.RoleBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: clustermetadata.Namespace, Name: "tkg-metadata-reader"}, binding); err != nil ||
		len(binding.Subjects) != 1 || binding.Subjects[0].Name != "system:authenticated" {
		t.Errorf("the reader RoleBinding: %v %+v", err, binding.Subjects)
	}
}
