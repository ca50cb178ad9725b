package tkg

import (
	"testing"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{ShortName("vsphere-cpi.tanzu.vmware.com"), "vsphere-cpi"},
		{PackageInstallName("wl", "antrea.tanzu.vmware.com"), "wl-antrea"},
		{DataValuesSecretName("wl", "kapp-controller.tanzu.vmware.com.0.50.0"), "wl-kapp-controller-data-values"},
		{PackageConfigName("wl", "calico.tanzu.vmware.com"), "wl-calico-package"},
		{ConditionPrefix("vsphere-cpi.tanzu.vmware.com"), "Vsphere-Cpi"},
		{ConditionPrefix("antrea.tanzu.vmware.com.1.13.1"), "Antrea"},
		{LabelValue("kapp-controller.tanzu.vmware.com.0.30.0+vmware.1-tkg.1"), "kapp-controller.tanzu.vmware.com.0.30.0---vmware.1-tkg.1"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
