package components

import (
	"testing"
)

func TestImageName(t *testing.T) {
	for in, want := range map[string]string{
		"registry.k8s.io/cluster-api/cluster-api-controller:v1.13.4":                      "cluster-api-controller",
		"projects.registry.vmware.com/tkg/tanzu_core/addons/addons-controller@sha256:abc": "addons-controller",
		"localhost:5000/addons-controller:v1":                                             "addons-controller",
		"nginx":                                                                           "nginx",
	} {
		if got := ImageName(in); got != want {
			t.Errorf("ImageName(%s) = %s, want %s", in, got, want)
		}
	}
	r := Default()
	if name, ok := r.ComponentFor("projects.registry.vmware.com/tkg/addons-controller:v0.32.0"); !ok || name != "tanzu-addons-manager" {
		t.Errorf("the addons-controller image does not map to the addons manager: %v %v", name, ok)
	}
	if _, ok := r.ComponentFor("nginx:1.27"); ok {
		t.Error("nginx maps to a component")
	}
	if _, err := r.Get("nope"); err == nil {
		t.Error("an unknown component is found")
	}
}
