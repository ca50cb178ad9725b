package simulator

import (
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// cloneConfig gives clones what vCenter gives them and vcsim v0.53.0 does not: the clone spec's
// extraConfig (where CAPV puts the cloud-init, guestinfo.userdata) and the source's vApp
// product and properties (where a node image says its Kubernetes VERSION). vcsim sets the
// spec's extraConfig on a copy of the new VM's config, which it then drops, and copies no vApp
// configuration.
//
// vcsim offers no hook after a method, so the fix has two halves: the registry's method hook
// notes what a CloneVM_Task call asks for, and a registry handler gives it to the VM when the
// clone registers it. The rest of the clone is vcsim's.
type cloneConfig struct {
	mu sync.Mutex
	// pending is what each clone in progress is to get, by folder and name.
	pending map[cloneKey]pendingClone
}

// dirSuffix is what vcsim appends to a VM's directory name when a directory of that name exists.
var dirSuffix = regexp.MustCompile(` \([0-9]+\)$`)

type cloneKey struct{ folder, name string }

type pendingClone struct {
	extraConfig []types.BaseOptionValue
	vApp        types.BaseVmConfigInfo
}

func newCloneConfig() *cloneConfig {
	return &cloneConfig{pending: map[cloneKey]pendingClone{}}
}

// noteClone is the registry's method hook: it notes a clone's extraConfig and source's vApp
// configuration, and lets vcsim serve the call.
func (c *cloneConfig) noteClone(ctx *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
	req, ok := m.Body.(*types.CloneVM_Task)
	if !ok {
		return nil, nil
	}
	source, ok := ctx.Map.Get(m.This).(*simulator.VirtualMachine)
	if !ok {
		return nil, nil
	}
	p := pendingClone{}
	if req.Spec.Config != nil {
		p.extraConfig = req.Spec.Config.ExtraConfig
	}
	if source.Config != nil {
		p.vApp = source.Config.VAppConfig
	}
	c.mu.Lock()
	c.pending[cloneKey{req.Folder.Value, req.Name}] = p
	c.mu.Unlock()
	return nil, nil
}

// Reference names the handler in the registry.
func (c *cloneConfig) Reference() types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "SlipwayCloneConfig", Value: "clone-config"}
}

// PutObject gives a VM that a noted clone registers its extraConfig and vApp configuration. It
// runs as the clone creates the VM, before the clone's task ends.
func (c *cloneConfig) PutObject(_ *simulator.Context, o mo.Reference) {
	vm, ok := o.(*simulator.VirtualMachine)
	if !ok || vm.Parent == nil || vm.Config == nil {
		return
	}
	// The VM is registered before its name is set, but its directory is already named after it:
	// "[datastore] NAME", or "[datastore] NAME (N)" when a directory of that name existed.
	_, dir, _ := strings.Cut(vm.Config.Files.SnapshotDirectory, "] ")
	key := cloneKey{vm.Parent.Value, dirSuffix.ReplaceAllString(path.Base(dir), "")}
	c.mu.Lock()
	p, ok := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if !ok {
		return
	}
	for _, o := range p.extraConfig {
		v := o.GetOptionValue()
		if v == nil || v.Key == "" {
			continue
		}
		replaced := false
		for i, have := range vm.Config.ExtraConfig {
			if have.GetOptionValue().Key == v.Key {
				vm.Config.ExtraConfig[i], replaced = &types.OptionValue{Key: v.Key, Value: v.Value}, true
			}
		}
		if !replaced {
			vm.Config.ExtraConfig = append(vm.Config.ExtraConfig, &types.OptionValue{Key: v.Key, Value: v.Value})
		}
	}

	if p.vApp != nil {
		info := *p.vApp.GetVmConfigInfo()
		info.Product = append([]types.VAppProductInfo(nil), info.Product...)
		info.Property = append([]types.VAppPropertyInfo(nil), info.Property...)
		vm.Config.VAppConfig = &info
	}
}

// UpdateObject is part of vcsim's registry handler; clones need nothing on update.
func (c *cloneConfig) UpdateObject(*simulator.Context, mo.Reference, []types.PropertyChange) {}

// RemoveObject is part of vcsim's registry handler; a clone that failed before registering its
// VM leaves its note, which the next clone of that name replaces.
func (c *cloneConfig) RemoveObject(*simulator.Context, types.ManagedObjectReference) {}
