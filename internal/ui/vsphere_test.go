package ui

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/internal/config"
	"github.com/slipway-dev/slipway/internal/test/vcentertest"
	"github.com/slipway-dev/slipway/internal/vsphere/prerequisites"
	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
)

// TestVSpherePage connects to the vCenter simulator as the vSphere page does: the certificate's
// thumbprint is shown first for the user to accept; a wrong password and an unknown datacenter
// come back under their variables; then the datacenters and, in the one chosen, what a cluster
// can use, by the paths the create flow's checks resolve, and the node OVA templates.
func TestVSpherePage(t *testing.T) {
	s := vcentertest.Start(t)
	vcentertest.Template(t, s, "ubuntu-2004-kube-v1.35.4+vmware.1", "v1.35.4+vmware.1-tkg.1-ubuntu-2004")
	in := newInstaller(t, nil)
	vars := map[string]string{config.InfrastructureProvider: "vsphere", config.VSphereServer: s.URL.Host,
		config.VSphereUsername: s.Username, config.VSpherePassword: "wrong"}
	connect := func() (int, vsphereAnswer) {
		var got vsphereAnswer
		status := in.call(t, http.MethodPost, "/api/vsphere", configRequest{Variables: vars}, &got)
		return status, got
	}

	status, got := connect()
	if status != http.StatusOK || !got.Accept || got.Thumbprint != s.Thumbprint || got.Inventory != nil {
		t.Fatalf("without a thumbprint: %d %+v, want the certificate's %s to accept", status, got, s.Thumbprint)
	}
	vars[config.VSphereTLSThumbprint] = "AA:BB"
	if status, got = connect(); status != http.StatusOK || !got.Accept || got.Configured != "AA:BB" {
		t.Errorf("a thumbprint that differs: %d %+v, want the configured one named", status, got)
	}
	vars[config.VSphereTLSThumbprint] = got.Thumbprint
	if status, got = connect(); status != http.StatusUnprocessableEntity || len(got.Errors[config.VSphereUsername]) != 1 {
		t.Errorf("a wrong password: %d %+v, want an error under %s", status, got, config.VSphereUsername)
	}
	vars[config.VSpherePassword] = s.Password
	vars[config.VSphereDatacenter] = "nowhere"
	if status, got = connect(); status != http.StatusUnprocessableEntity || len(got.Errors[config.VSphereDatacenter]) != 1 ||
		!strings.Contains(got.Errors[config.VSphereDatacenter][0], "use one of "+simulator.Datacenter) {
		t.Errorf("an unknown datacenter: %d %+v", status, got)
	}
	delete(vars, config.VSphereDatacenter)
	if status, got = connect(); status != http.StatusOK || got.Inventory == nil || !slices.Contains(got.Inventory.Datacenters, simulator.Datacenter) ||
		got.Inventory.Networks != nil || !strings.Contains(got.Inventory.Version, "7.0") {
		t.Fatalf("the vCenter's datacenters: %d %+v", status, got)
	}
	vars[config.VSphereDatacenter] = simulator.Datacenter
	status, got = connect()
	if status != http.StatusOK || got.Inventory == nil {
		t.Fatalf("the datacenter's lists: %d %+v", status, got)
	}
	inv := got.Inventory
	for list, want := range map[string]struct {
		got  []string
		path string
	}{
		"networks": {inv.Networks, simulator.Network}, "resource pools": {inv.ResourcePools, simulator.ResourcePool},
		"datastores": {inv.Datastores, simulator.Datastore}, "folders": {inv.Folders, simulator.Folder},
	} {
		if !slices.Contains(want.got, want.path) {
			t.Errorf("the %s %v do not hold %s", list, want.got, want.path)
		}
	}
	// The node OVA's template, with its release's Kubernetes version and its OS as OS_NAME,
	// OS_VERSION and OS_ARCH take it.
	if len(inv.OSImages) != 1 || inv.OSImages[0] != (prerequisites.OSImage{Path: simulator.Folder + "/ubuntu-2004-kube-v1.35.4+vmware.1",
		OVAVersion: "v1.35.4+vmware.1-tkg.1-ubuntu-2004", Kubernetes: "v1.35.4+vmware.1", OSName: "ubuntu", OSVersion: "20.04", OSArch: "amd64"}) {
		t.Errorf("the OS images: %+v", inv.OSImages)
	}
}
