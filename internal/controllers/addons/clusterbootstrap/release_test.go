package clusterbootstrap

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
)

// TestFollowRelease: on upgrade, a package follows the release's version of the same package,
// also when the template names another one in its place (calico where the release defaults to
// antrea) and for an additional package the template does not name.
func TestFollowRelease(t *testing.T) {
	pkg := func(refName string) *runv1alpha3.ClusterBootstrapPackage {
		return &runv1alpha3.ClusterBootstrapPackage{RefName: refName}
	}
	spec := &runv1alpha3.ClusterBootstrapTemplateSpec{
		Kapp: pkg("kapp-controller.tanzu.vmware.com.0.50.0+vmware.1-tkg.1"),
		CNI:  pkg("calico.tanzu.vmware.com.3.25.1+vmware.2-tkg.1"),
		AdditionalPackages: []*runv1alpha3.ClusterBootstrapPackage{
			pkg("metrics-server.tanzu.vmware.com.0.6.4+vmware.1-tkg.1"),
			pkg("pinniped.tanzu.vmware.com.0.24.0+vmware.1-tkg.1"),
			pkg("user-package.example.com.1.0.0"),
		},
	}
	template := &runv1alpha3.ClusterBootstrapTemplateSpec{
		Kapp: pkg("kapp-controller.tanzu.vmware.com.0.50.1+vmware.1-tkg.1"),
		CNI:  pkg("antrea.tanzu.vmware.com.1.13.1+vmware.1-tkg.1"),
		CSI:  pkg("vsphere-csi.tanzu.vmware.com.3.1.0+vmware.1-tkg.1"),
		AdditionalPackages: []*runv1alpha3.ClusterBootstrapPackage{
			pkg("metrics-server.tanzu.vmware.com.0.7.2+vmware.1-tkg.1"),
			pkg("secretgen-controller.tanzu.vmware.com.0.15.0+vmware.1-tkg.1"),
		},
	}
	addable := template.DeepCopy()
	addable.CSI = nil // another infrastructure's
	tkr := &runv1alpha3.TanzuKubernetesRelease{Spec: runv1alpha3.TanzuKubernetesReleaseSpec{BootstrapPackages: []corev1.LocalObjectReference{
		{Name: "kapp-controller.tanzu.vmware.com.0.50.1+vmware.1-tkg.1"}, {Name: "antrea.tanzu.vmware.com.1.13.1+vmware.1-tkg.1"},
		{Name: "calico.tanzu.vmware.com.3.26.3+vmware.2-tkg.1"}, {Name: "metrics-server.tanzu.vmware.com.0.7.2+vmware.1-tkg.1"},
		{Name: "pinniped.tanzu.vmware.com.0.25.0+vmware.1-tkg.1"}, {Name: "secretgen-controller.tanzu.vmware.com.0.15.0+vmware.1-tkg.1"},
	}}}
	added := followRelease(spec, template, addable, tkr)
	for _, tc := range []struct{ got, want string }{
		{spec.Kapp.RefName, "kapp-controller.tanzu.vmware.com.0.50.1+vmware.1-tkg.1"},
		{spec.CNI.RefName, "calico.tanzu.vmware.com.3.26.3+vmware.2-tkg.1"},
		{spec.AdditionalPackages[0].RefName, "metrics-server.tanzu.vmware.com.0.7.2+vmware.1-tkg.1"},
		{spec.AdditionalPackages[1].RefName, "pinniped.tanzu.vmware.com.0.25.0+vmware.1-tkg.1"},
		{spec.AdditionalPackages[2].RefName, "user-package.example.com.1.0.0"},
		{spec.AdditionalPackages[3].RefName, "secretgen-controller.tanzu.vmware.com.0.15.0+vmware.1-tkg.1"},
	} {
		if tc.got != tc.want {
			t.Errorf("refName %s, want %s", tc.got, tc.want)
		}
	}
	if spec.CSI != nil {
		t.Errorf("another infrastructure's CSI was added: %+v", spec.CSI)
	}
	if len(added) != 1 || added[0].RefName != "secretgen-controller.tanzu.vmware.com.0.15.0+vmware.1-tkg.1" {
		t.Errorf("added %+v, want secretgen-controller only", added)
	}
}
