package simulator

import (
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// BootFunc boots a VM as it powers on. It returns the address and host name the VM's guest
// reports, as VMware Tools would, or false when the VM does not boot now (it may later, by
// other means).
type BootFunc func(vm mo.VirtualMachine) (ip, hostName string, ok bool)

// powerOn is the registry handler that boots each VM as it powers on and, before the power-on
// task ends, sets what its guest reports. A real VM's tools report its address a few seconds
// after it powers on; here the address is known as the VM powers on, and reporting it then
// spares CAPV, which looks for the address as the task ends, a 10-second wait before it looks
// again.
type powerOn struct {
	mu   sync.Mutex
	boot BootFunc
}

// OnPowerOn makes f boot each VM that powers on from now.
func (s *Server) OnPowerOn(f BootFunc) {
	s.powerOn.mu.Lock()
	s.powerOn.boot = f
	s.powerOn.mu.Unlock()
}

// Reference names the handler in the registry.
func (p *powerOn) Reference() types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "SlipwayPowerOn", Value: "power-on"}
}

// PutObject is part of vcsim's registry handler; a VM powers on after it is registered.
func (p *powerOn) PutObject(*simulator.Context, mo.Reference) {}

// RemoveObject is part of vcsim's registry handler.
func (p *powerOn) RemoveObject(*simulator.Context, types.ManagedObjectReference) {}

// UpdateObject boots a VM whose power state becomes poweredOn. It runs inside the power-on
// task, which holds the VM's lock: the boot must not call the simulator about this VM.
func (p *powerOn) UpdateObject(ctx *simulator.Context, o mo.Reference, changes []types.PropertyChange) {
	vm, ok := o.(*mo.VirtualMachine)
	if !ok || !poweringOn(changes) {
		return
	}
	p.mu.Lock()
	boot := p.boot
	p.mu.Unlock()
	if boot == nil {
		return
	}
	ip, hostName, ok := boot(*vm)
	if !ok {
		return
	}
	// What vcsim does for the SET.guest.ipAddress and SET.guest.hostName of a reconfiguration.
	update := []types.PropertyChange{
		{Name: "guest.ipAddress", Val: ip},
		{Name: "summary.guest.ipAddress", Val: ip},
		{Name: "guest.hostName", Val: hostName},
		{Name: "summary.guest.hostName", Val: hostName},
	}
	if vm.Guest != nil && len(vm.Guest.Net) > 0 {
		vm.Guest.Net[0].IpAddress = []string{ip}
		update = append(update, types.PropertyChange{Name: "guest.net", Val: vm.Guest.Net})
	}
	ctx.Update(vm, update)
}

// poweringOn says whether changes power a VM on.
func poweringOn(changes []types.PropertyChange) bool {
	for _, c := range changes {
		if c.Name == "runtime.powerState" {
			s, ok := c.Val.(types.VirtualMachinePowerState)
			return ok && s == types.VirtualMachinePowerStatePoweredOn
		}
	}
	return false
}
