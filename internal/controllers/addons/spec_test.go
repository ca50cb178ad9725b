package addons

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/scheme"
)

func providerPackage(refName, kind string) *runv1alpha3.ClusterBootstrapPackage {
	return &runv1alpha3.ClusterBootstrapPackage{RefName: refName, ValuesFrom: &runv1alpha3.ValuesFrom{
		ProviderRef: &corev1.TypedLocalObjectReference{APIGroup: ptr.To("cpi.tanzu.vmware.com"), Kind: kind, Name: "x"}}}
}

func TestDropForeign(t *testing.T) {
	spec := func() *runv1alpha3.ClusterBootstrapTemplateSpec {
		return &runv1alpha3.ClusterBootstrapTemplateSpec{
			CNI: providerPackage("antrea.tanzu.vmware.com.1.13.1", "AntreaConfig"),
			CPI: providerPackage("vsphere-cpi.tanzu.vmware.com.1.27.0", "VSphereCPIConfig"),
			CSI: providerPackage("vsphere-csi.tanzu.vmware.com.3.1.2", "VSphereCSIConfig"),
		}
	}
	local := spec()
	if dropped := DropForeign(local, "LocalCluster"); !slices.Equal(dropped, []string{"vsphere-cpi.tanzu.vmware.com.1.27.0", "vsphere-csi.tanzu.vmware.com.3.1.2"}) ||
		local.CPI != nil || local.CSI != nil || local.CNI == nil {
		t.Errorf("a local cluster: dropped %v, left %+v", dropped, local)
	}
	vsphere := spec()
	if dropped := DropForeign(vsphere, "VSphereCluster"); len(dropped) != 0 || vsphere.CPI == nil || vsphere.CSI == nil {
		t.Errorf("a vSphere cluster keeps its CPI and CSI: dropped %v", dropped)
	}
	// A CPI whose configuration kind is not a known provider's is kept.
	other := spec()
	other.CPI = providerPackage("kube-vip-cloud-provider.tanzu.vmware.com.0.0.5", "KubevipCPIConfig")
	if DropForeign(other, "LocalCluster"); other.CPI == nil {
		t.Error("a CPI of no known infrastructure was dropped")
	}
}

func TestInfrastructureKind(t *testing.T) {
	cc := &clusterv1.ClusterClass{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tkg-local-default-v1.0.0"}}
	cc.Spec.Infrastructure.TemplateRef.Kind = "LocalClusterTemplate"
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(cc).Build()
	for _, tc := range []struct {
		name    string
		cluster func(*clusterv1.Cluster)
		want    string
	}{
		{"its infrastructureRef", func(cl *clusterv1.Cluster) { cl.Spec.InfrastructureRef.Kind = "VSphereCluster" }, "VSphereCluster"},
		{"its class's template, before the topology controller ran", func(cl *clusterv1.Cluster) { cl.Spec.Topology.ClassRef.Name = cc.Name }, "LocalCluster"},
		{"a class that does not exist", func(cl *clusterv1.Cluster) { cl.Spec.Topology.ClassRef.Name = "nosuch" }, ""},
		{"neither", func(*clusterv1.Cluster) {}, ""},
	} {
		cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc"}}
		tc.cluster(cl)
		if got, err := InfrastructureKind(t.Context(), c, cl); err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
