package ova_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/slipway-dev/slipway/internal/test/vcentertest"
	"github.com/slipway-dev/slipway/internal/vsphere/ova"
	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// TestBuildAndImport builds a node OVA, imports it into the simulator and finds it as
// tkr-vsphere-resolver does: a template with the OVA's VERSION and distribution.
func TestBuildAndImport(t *testing.T) {
	s := vcentertest.Start(t)

	img := ova.Image{Name: "ubuntu-2004-kube-v1.35.4+vmware.1", OVAVersion: "v1.35.4+vmware.1-tkg.1-ubuntu-2004",
		Distro: vcenter.OS{Name: "ubuntu", Version: "20.04", Arch: "amd64"}}
	path := filepath.Join(t.TempDir(), "node.ova")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ova.Build(f, img); err != nil {
		t.Fatal(err)
	}
	f.Close()

	c, err := s.Login(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got, err := ova.Import(t.Context(), c.Client, path, ova.Target{Datacenter: simulator.Datacenter, Folder: simulator.Folder,
		ResourcePool: simulator.ResourcePool, Datastore: simulator.Datastore, Network: simulator.Network})
	if err != nil {
		t.Fatal(err)
	}
	if want := simulator.Folder + "/" + img.Name; got != want {
		t.Errorf("imported as %s, want %s", got, want)
	}
	vms, err := vcenter.ListVMs(t.Context(), vcenter.Endpoint{Server: s.URL.Host, Datacenter: simulator.Datacenter, Username: s.Username, Password: s.Password, Thumbprint: s.Thumbprint})
	if err != nil {
		t.Fatal(err)
	}
	if len(vms) != 1 {
		t.Fatalf("node images %+v, want the imported one", vms)
	}
	vm := vms[0]
	if vm.Path != got || !vm.IsTemplate || vm.OVAVersion != img.OVAVersion || vm.Distro != (vcenter.OS{Name: "ubuntu", Version: "2004", Arch: "amd64"}) {
		t.Errorf("found %+v", vm)
	}

	// CAPV clones only templates with a disk, which it grows: the template has one, of 20 GiB.
	template, err := find.NewFinder(c.Client).VirtualMachine(t.Context(), got)
	if err != nil {
		t.Fatal(err)
	}
	devices, err := template.Device(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	disks := devices.SelectByType((*types.VirtualDisk)(nil))
	if len(disks) != 1 || disks[0].(*types.VirtualDisk).CapacityInKB != 20*1024*1024 {
		t.Errorf("the template's disks are %d, want one of 20 GiB", len(disks))
	}

	// The same name again is refused by vCenter, and said so.
	if _, err := ova.Import(t.Context(), c.Client, path, ova.Target{Datacenter: simulator.Datacenter, Folder: simulator.Folder,
		ResourcePool: simulator.ResourcePool, Datastore: simulator.Datastore}); err == nil {
		t.Error("a second import of the same name succeeded")
	}
	if _, err := ova.Import(t.Context(), c.Client, path, ova.Target{Datacenter: simulator.Datacenter, Folder: "folder9",
		ResourcePool: simulator.ResourcePool, Datastore: simulator.Datastore}); err == nil {
		t.Error("an import into a missing folder succeeded")
	}
}
