package config

import (
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/webhooks"

	"github.com/slipway-dev/slipway/internal/carvel/deploy"
	"github.com/slipway-dev/slipway/internal/test/packagesource"
)

// classSources are the package sources of each provider's ClusterClass and their values.
var classSources = map[string]struct{ dir, values string }{
	"local":   {filepath.Join("tkg-clusterclass.tanzu.vmware.com", "0.1.0"), "namespace: tkg-system\ninfrastructureProvider: local\n"},
	"vsphere": {filepath.Join("tkg-clusterclass-vsphere.tanzu.vmware.com", "0.1.0"), "namespace: tkg-system\n"},
}

// TestObjectFitsTheClusterClass checks the Cluster of every golden file against its provider's
// ClusterClass as Cluster API's webhook does: every variable it sets is one the class defines,
// with a value its schema takes, and every variable the class requires is set.
func TestObjectFitsTheClusterClass(t *testing.T) {
	classes := map[string]*clusterv1.ClusterClass{}
	for provider, src := range classSources {
		classes[provider] = renderClass(t, src.dir, src.values)
	}
	for _, tc := range goldenCases {
		t.Run(tc.file, func(t *testing.T) {
			c := completeFile(t, tc.file, tc.role)
			if errs := (&webhooks.Cluster{}).DefaultAndValidateVariables(t.Context(), c.Object(), nil, classes[c.InfrastructureProvider]); len(errs) > 0 {
				t.Errorf("the ClusterClass %s refuses the Cluster's variables: %v", c.ClassName(), errs.ToAggregate())
			}
		})
	}
}

// renderClass renders a ClusterClass package source and returns its ClusterClass, with the
// status its reconciler would write: each variable of the spec, defined inline.
func renderClass(t *testing.T, dir, values string) *clusterv1.ClusterClass {
	t.Helper()
	out, err := packagesource.Render(t, dir, values)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := deploy.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() != "ClusterClass" {
			continue
		}
		class := &clusterv1.ClusterClass{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, class); err != nil {
			t.Fatal(err)
		}
		for _, v := range class.Spec.Variables {
			class.Status.Variables = append(class.Status.Variables, clusterv1.ClusterClassStatusVariable{
				Name: v.Name,
				Definitions: []clusterv1.ClusterClassStatusVariableDefinition{
					{From: clusterv1.VariableDefinitionFromInline, Required: ptr.To(*v.Required), Schema: v.Schema},
				},
			})
		}
		return class
	}
	t.Fatalf("%s renders no ClusterClass", dir)
	return nil
}
