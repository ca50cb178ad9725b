package resolver

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/test/tkrtest"
)

var osImage = tkrtest.OSImage

func release(version string, osImages []string, mutate ...func(*runv1alpha3.TanzuKubernetesRelease)) *runv1alpha3.TanzuKubernetesRelease {
	t := tkrtest.Release(version, osImages...)
	for _, m := range mutate {
		m(t)
	}
	return t
}

func sel(t *testing.T, s string) labels.Selector {
	t.Helper()
	parsed, err := labels.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

func TestResolve(t *testing.T) {
	images := []*runv1alpha3.OSImage{
		osImage("ubuntu-135", "v1.35.4+vmware.1", "ubuntu", "22.04", "ova"),
		osImage("photon-135", "v1.35.4+vmware.1", "photon", "5", "ova"),
		osImage("local-135", "v1.35.4+vmware.1", "slipway", "1", "local"),
		osImage("ubuntu-1351", "v1.35.4+vmware.2", "ubuntu", "22.04", "ova"),
		osImage("ubuntu-134", "v1.34.3+vmware.1", "ubuntu", "22.04", "ova"),
		osImage("photon-134", "v1.34.3+vmware.1", "photon", "5", "ova"),
	}
	tkr135 := release("v1.35.4+vmware.1-tkg.1", []string{"ubuntu-135", "photon-135", "local-135"})
	tkr1351 := release("v1.35.4+vmware.2-tkg.1", []string{"ubuntu-1351"})
	tkr134 := release("v1.34.3+vmware.1-tkg.1", []string{"ubuntu-134", "photon-134"})
	incompatible := release("v1.36.0+vmware.1-tkg.1", []string{"ubuntu-135"}, func(t *runv1alpha3.TanzuKubernetesRelease) {
		t.Status.Conditions = runv1alpha3.Conditions{{Type: runv1alpha3.ConditionCompatible, Status: "False"}}
	})
	deactivated := release("v1.35.5+vmware.1-tkg.1", []string{"ubuntu-135"}, func(t *runv1alpha3.TanzuKubernetesRelease) {
		t.Labels[runv1alpha3.LabelDeactivated] = ""
	})
	invalid := release("v1.35.6+vmware.1-tkg.1", []string{"ubuntu-135"}, func(t *runv1alpha3.TanzuKubernetesRelease) {
		t.Status.Conditions = runv1alpha3.Conditions{{Type: runv1alpha3.ConditionValid, Status: "False"}}
	})
	all := []*runv1alpha3.TanzuKubernetesRelease{tkr135, tkr1351, tkr134, incompatible, deactivated, invalid}

	for _, tc := range []struct {
		name    string
		query   Query
		want    string
		cpImage string
		mdImage []string
		err     []string
	}{
		{name: "minor prefix, newest wins", query: Query{ControlPlane: &OSImageQuery{K8sVersionPrefix: "v1.35"}}, want: tkr1351.Name, cpImage: "ubuntu-1351"},
		{name: "patch prefix", query: Query{ControlPlane: &OSImageQuery{K8sVersionPrefix: "v1.34.3"}}, want: tkr134.Name, cpImage: "photon-134"},
		{name: "full version with +", query: Query{ControlPlane: &OSImageQuery{K8sVersionPrefix: "v1.35.4+vmware.1"}}, want: tkr135.Name, cpImage: "local-135"},
		{name: "exact TKR name", query: Query{ControlPlane: &OSImageQuery{K8sVersionPrefix: tkr134.Name}}, want: tkr134.Name},
		{name: "no prefix: the newest usable release", query: Query{ControlPlane: &OSImageQuery{}}, want: tkr1351.Name},
		{name: "OS selector narrows the release", query: Query{ControlPlane: &OSImageQuery{K8sVersionPrefix: "v1.35", OSImageSelector: sel(t, "os-name=photon")}},
			want: tkr135.Name, cpImage: "photon-135"},
		{name: "image type selector", query: Query{ControlPlane: &OSImageQuery{K8sVersionPrefix: "v1.35", OSImageSelector: sel(t, "image-type=local")}},
			want: tkr135.Name, cpImage: "local-135"},
		{name: "control plane and machine deployments intersect", query: Query{
			ControlPlane:       &OSImageQuery{K8sVersionPrefix: "v1.35", OSImageSelector: sel(t, "os-name=ubuntu")},
			MachineDeployments: []*OSImageQuery{{K8sVersionPrefix: "v1.35", OSImageSelector: sel(t, "os-name=photon")}},
		}, want: tkr135.Name, cpImage: "ubuntu-135", mdImage: []string{"photon-135"}},
		{name: "TKR selector", query: Query{ControlPlane: &OSImageQuery{TKRSelector: sel(t, "!v1.35")}}, want: tkr134.Name},
		{name: "incompatible, deactivated and invalid releases are skipped", query: Query{ControlPlane: &OSImageQuery{K8sVersionPrefix: "v1.35.5"}},
			err: []string{"v1.35.5---vmware.1-tkg.1: deactivated", "v1.36.0---vmware.1-tkg.1: incompatible", "v1.35.6---vmware.1-tkg.1: invalid"}},
		{name: "no OS image matching", query: Query{ControlPlane: &OSImageQuery{K8sVersionPrefix: "v1.34", OSImageSelector: sel(t, "os-name=windows")}},
			err: []string{"the control plane {version v1.34, TKR selector any, OSImage selector os-name=windows}",
				"v1.34.3---vmware.1-tkg.1: control plane: no OSImage matching os-name=windows",
				"v1.35.4---vmware.1-tkg.1: control plane: version v1.35.4+vmware.1-tkg.1 does not match v1.34"}},
		{name: "parts that share no release", query: Query{
			ControlPlane:       &OSImageQuery{K8sVersionPrefix: "v1.35.4+vmware.2"},
			MachineDeployments: []*OSImageQuery{{OSImageSelector: sel(t, "os-name=photon")}},
		}, err: []string{"v1.35.4---vmware.2-tkg.1: machine deployment 0: no OSImage matching os-name=photon",
			"v1.35.4---vmware.1-tkg.1: control plane: version v1.35.4+vmware.1-tkg.1 does not match v1.35.4+vmware.2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Resolve(all, images, tc.query)
			if len(tc.err) > 0 {
				if err == nil {
					t.Fatalf("resolved %s, want an error", res.TKR.Name)
				}
				for _, want := range tc.err {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error lacks %q:\n%s", want, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.TKR.Name != tc.want {
				t.Errorf("resolved %s, want %s", res.TKR.Name, tc.want)
			}
			if tc.cpImage != "" && !hasImage(res.ControlPlane, tc.cpImage) {
				t.Errorf("control plane images %v lack %s", names(res.ControlPlane), tc.cpImage)
			}
			for i, want := range tc.mdImage {
				if !hasImage(res.MachineDeployments[i], want) || len(res.MachineDeployments[i]) != 1 {
					t.Errorf("machine deployment %d images %v, want [%s]", i, names(res.MachineDeployments[i]), want)
				}
			}
		})
	}
	if _, err := Resolve(nil, nil, Query{ControlPlane: &OSImageQuery{}}); err == nil || !strings.Contains(err.Error(), "no TanzuKubernetesRelease exists") {
		t.Errorf("an empty catalogue gives %v", err)
	}
}

func hasImage(images []*runv1alpha3.OSImage, name string) bool {
	for _, i := range images {
		if i.Name == name {
			return true
		}
	}
	return false
}

func names(images []*runv1alpha3.OSImage) []string {
	var out []string
	for _, i := range images {
		out = append(out, i.Name)
	}
	return out
}
