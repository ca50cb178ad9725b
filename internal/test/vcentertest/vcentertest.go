// Package vcentertest serves slipway's vCenter simulator to tests.
package vcentertest

import (
	"net"
	"sort"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// Password is the simulator user's password in tests.
const Password = "s3cret"

// FreeAddress returns a loopback HOST:PORT nothing listens on, for a simulator to serve on.
func FreeAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Start serves a simulator, with the seeds' inventory, on a free loopback port until the test
// ends.
func Start(t testing.TB) *simulator.Server {
	t.Helper()
	s, err := simulator.Start(t.Context(), simulator.Options{Address: FreeAddress(t), Dir: t.TempDir(), Username: simulator.DefaultUsername, Password: Password})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Template makes in folder0, as importing a node OVA of ovaVersion (ubuntu 20.04 amd64) does, a
// VM template, and returns it.
func Template(t testing.TB, s *simulator.Server, name, ovaVersion string) *object.VirtualMachine {
	t.Helper()
	ctx := t.Context()
	c, err := s.Login(ctx)
	if err != nil {
		t.Fatal(err)
	}
	path, err := vcenter.CreateNodeTemplate(ctx, c.Client, vcenter.NodeTemplate{Name: name, Folder: simulator.Folder,
		ResourcePool: simulator.ResourcePool, Datastore: simulator.Datastore, OVAVersion: ovaVersion,
		Distro: vcenter.OS{Name: "ubuntu", Version: "20.04", Arch: "amd64"}})
	if err != nil {
		t.Fatal(err)
	}
	vm, err := find.NewFinder(c.Client, true).VirtualMachine(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

// Clone clones a template into folder0 and rp0 with the extraConfig given, as CAPV does, powers
// the clone on when on, and returns it.
func Clone(t testing.TB, template *object.VirtualMachine, name string, extraConfig map[string]string, on bool) *object.VirtualMachine {
	t.Helper()
	ctx := t.Context()
	finder := find.NewFinder(template.Client(), true)
	folder, err := finder.Folder(ctx, simulator.Folder)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := finder.ResourcePool(ctx, simulator.ResourcePool)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(extraConfig))
	for k := range extraConfig {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var options []types.BaseOptionValue
	for _, k := range keys {
		options = append(options, &types.OptionValue{Key: k, Value: extraConfig[k]})
	}
	poolRef := pool.Reference()
	task, err := template.Clone(ctx, folder, name, types.VirtualMachineCloneSpec{
		Location: types.VirtualMachineRelocateSpec{Pool: &poolRef}, Config: &types.VirtualMachineConfigSpec{ExtraConfig: options}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := task.WaitForResult(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vm := object.NewVirtualMachine(template.Client(), info.Result.(types.ManagedObjectReference))
	if !on {
		return vm
	}
	// vcsim leaves a clone off whatever the spec says; CAPV powers it on once it is made.
	if task, err = vm.PowerOn(ctx); err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return vm
}
