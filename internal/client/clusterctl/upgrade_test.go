package clusterctl

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
)

func TestProviderUpgrades(t *testing.T) {
	provider := func(name, typ, version string) clusterctlv1.Provider {
		return clusterctlv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: name + "-system", Name: name}, Type: typ, Version: version}
	}
	repository := Providers()
	installed := []clusterctlv1.Provider{
		provider("cluster-api", "CoreProvider", "v1.12.0"),                  // older: upgraded
		provider("bootstrap-kubeadm", "BootstrapProvider", Version),         // the repository's: kept
		provider("control-plane-kubeadm", "ControlPlaneProvider", "v9.0.0"), // newer: kept
		provider("infrastructure-aws", "InfrastructureProvider", "v0.1.0"),  // not in the repository: kept
		provider(VSphereInfrastructure, "InfrastructureProvider", "v1.16.0"),
	}
	got, err := providerUpgrades(installed, repository)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range got {
		names = append(names, u.Name+" "+u.Version+"->"+u.to)
	}
	want := []string{"cluster-api v1.12.0->" + Version, VSphereInfrastructure + " v1.16.0->" + CAPVVersion}
	if !slices.Equal(names, want) {
		t.Errorf("upgrades: got %q, want %q", names, want)
	}

	if got, err := providerUpgrades(installed[1:2], repository); err != nil || len(got) != 0 {
		t.Errorf("every provider at the repository's version: got %v, %v, want none", got, err)
	}
	if _, err := providerUpgrades([]clusterctlv1.Provider{provider("cluster-api", "CoreProvider", "latest")}, repository); err == nil {
		t.Errorf("an installed version that is no version: want an error")
	}
}
