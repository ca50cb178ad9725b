// Package vcenter reads a vCenter as slipway needs it: logging in with a thumbprint, and the node
// images (VMs and templates imported from Kubernetes node OVAs) of a datacenter, and CAPV's
// credentials file.
package vcenter

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/local/hostnet"
)

// SimulatorMark ends the full name slipway's vCenter simulator reports, which tells it from a
// real vCenter. It lives here, not in the simulator, so that what reads a vCenter does not build
// the simulator.
const SimulatorMark = "(simulated by slipway)"

// SimulatorEndpoint is a control-plane endpoint for a cluster on the simulator, whose VMs boot
// as real nodes of this host: an unused address of the local runtime's bridge block for
// endpoints (hostnet.EndpointBlock).
const SimulatorEndpoint = "198.18.255.1"

// CheckSimulatorEndpoint says what is wrong with the control-plane endpoint (an IP address) of a
// cluster whose VMs the simulator boots as nodes of this host, which it serves as kube-vip would,
// in hostnet.EndpointBlock on the local runtime's bridge.
func CheckSimulatorEndpoint(endpoint string) error {
	ip, err := netip.ParseAddr(endpoint)
	block := hostnet.EndpointBlock
	last := block.Addr().As4()
	last[3] = 255
	if err != nil || !block.Contains(ip) || ip == block.Addr() || ip == netip.AddrFrom4(last) {
		return fmt.Errorf("VSPHERE_CONTROL_PLANE_ENDPOINT %s: the simulator's VMs boot as nodes of this host, whose control-plane endpoints it serves in %s on the local runtime's bridge: set VSPHERE_CONTROL_PLANE_ENDPOINT to an unused address of it such as %s",
			endpoint, block, SimulatorEndpoint)
	}
	return nil
}

// Simulated says whether the vCenter whose full name (AboutInfo.FullName) is given is slipway's
// simulator.
func Simulated(fullName string) bool { return strings.Contains(fullName, SimulatorMark) }

// The vApp properties a Kubernetes node OVA carries, in the category image-builder writes.
const (
	PropertyCategory      = "Cluster API Provider (CAPI)"
	PropertyVersion       = "VERSION"
	PropertyDistroName    = "DISTRO_NAME"
	PropertyDistroVersion = "DISTRO_VERSION"
	PropertyDistroArch    = "DISTRO_ARCH"

	// guestInfoUserData marks a VM that CAPV cloned and bootstrapped: a node, not an imported OVA.
	guestInfoUserData = "guestinfo.userdata"
)

// SupervisorClustersPath is where vCenter lists the clusters that vSphere with Tanzu (a
// Supervisor) runs on, which TKG asks to detect it.
const SupervisorClustersPath = "/api/vcenter/namespace-management/software/clusters"

// Endpoint is where and as whom to look for templates.
type Endpoint struct {
	// Server is the vCenter's host[:port] or URL.
	Server     string
	Datacenter string
	Username   string
	Password   string
	// Thumbprint is the SHA-1 thumbprint of the vCenter's certificate; empty skips verification,
	// as TKG does.
	Thumbprint string
}

// VM is a virtual machine imported from a Kubernetes node OVA.
type VM struct {
	// Path is the inventory path, such as /dc0/vm/ubuntu-2004-kube-v1.35.4+vmware.1.
	Path string
	MOID string
	// OVAVersion and the distribution come from the OVA's vApp properties; Distro.Version has
	// its dots removed (20.04 becomes 2004), as OSImages write it.
	OVAVersion string
	Distro     OS
	// DistroVersion is the distribution's version as the OVA writes it, with its dots (20.04),
	// as OS_VERSION takes it.
	DistroVersion string
	IsTemplate    bool
}

// OS is a distribution as an OSImage names it.
type OS struct {
	Name, Version, Arch string
}

// ListVMs returns the VMs of the endpoint's datacenter that were imported from a Kubernetes node
// OVA: templates, and VMs that are not cluster nodes.
func ListVMs(ctx context.Context, ep Endpoint) ([]VM, error) {
	c, err := Login(ctx, ep)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Logout(context.WithoutCancel(ctx)) }()
	return ListVMsOf(ctx, c.Client, ep.Datacenter)
}

// ListVMsOf is ListVMs on a session already logged in.
func ListVMsOf(ctx context.Context, c *vim25.Client, datacenter string) ([]VM, error) {
	finder := find.NewFinder(c, true)
	dc, err := finder.Datacenter(ctx, datacenter)
	if err != nil {
		return nil, fmt.Errorf("datacenter %q in vCenter %s: %w", datacenter, c.URL().Host, err)
	}
	finder.SetDatacenter(dc)
	objs, err := finder.VirtualMachineList(ctx, dc.InventoryPath+"/vm/...")
	var notFound *find.NotFoundError
	if errors.As(err, &notFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to list the VMs of %s: %w", dc.InventoryPath, err)
	}
	refs := make([]types.ManagedObjectReference, len(objs))
	paths := map[string]string{}
	for i, o := range objs {
		refs[i] = o.Reference()
		paths[o.Reference().Value] = o.InventoryPath
	}
	var mos []mo.VirtualMachine
	// Only what nodeImage reads: a VM's whole config is large.
	if err := property.DefaultCollector(c).Retrieve(ctx, refs, []string{"config.template", "config.vAppConfig", "config.extraConfig"}, &mos); err != nil {
		return nil, fmt.Errorf("failed to read the VMs' configuration: %w", err)
	}
	var vms []VM
	for i := range mos {
		vm, ok := nodeImage(&mos[i])
		if !ok {
			continue
		}
		vm.Path = paths[vm.MOID]
		vms = append(vms, vm)
	}
	return vms, nil
}

// Login connects to the endpoint's vCenter, verifying its certificate's thumbprint when it has
// one, and logs in.
func Login(ctx context.Context, ep Endpoint) (*govmomi.Client, error) {
	u, err := soap.ParseURL(strings.TrimSpace(ep.Server))
	if err != nil {
		return nil, fmt.Errorf("vCenter server %q is not a host or URL: %w", ep.Server, err)
	}
	if u == nil {
		return nil, errors.New("no vCenter server given: set VSPHERE_SERVER to its host or URL")
	}
	u.User = nil
	sc := soap.NewClient(u, ep.Thumbprint == "")
	if ep.Thumbprint != "" {
		sc.SetThumbprint(u.Host, ep.Thumbprint)
	}
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("failed to reach vCenter %s: %w", u.Host, err)
	}
	c := &govmomi.Client{Client: vc, SessionManager: session.NewManager(vc)}
	if err := c.Login(ctx, url.UserPassword(ep.Username, ep.Password)); err != nil {
		return nil, fmt.Errorf("failed to log in to vCenter %s as %q: %w", u.Host, ep.Username, err)
	}
	return c, nil
}

// nodeImage reads a VM's OVA properties; ok is false for VMs that are not node images (no
// VERSION property) and for cluster nodes.
func nodeImage(m *mo.VirtualMachine) (VM, bool) {
	if m.Config == nil || m.Config.VAppConfig == nil {
		return VM{}, false
	}
	if !m.Config.Template {
		for _, o := range m.Config.ExtraConfig {
			if o.GetOptionValue().Key == guestInfoUserData {
				return VM{}, false
			}
		}
	}
	props := properties(m.Config.VAppConfig)
	vm := VM{MOID: m.Self.Value, IsTemplate: m.Config.Template, OVAVersion: props[PropertyVersion], DistroVersion: props[PropertyDistroVersion],
		Distro: OS{Name: props[PropertyDistroName], Version: strings.ReplaceAll(props[PropertyDistroVersion], ".", ""), Arch: props[PropertyDistroArch]}}
	return vm, vm.OVAVersion != ""
}

// properties are the values of a VM's vApp properties of the node images' category, by id.
func properties(config types.BaseVmConfigInfo) map[string]string {
	props := map[string]string{}
	if config == nil {
		return props
	}
	info := config.GetVmConfigInfo()
	if info == nil {
		return props
	}
	for _, p := range info.Property {
		if p.Category == PropertyCategory {
			props[p.Id] = p.DefaultValue
		}
	}
	return props
}

// VAppVersion is the VERSION a VM's node image gives it (v1.35.4+vmware.1), or "".
func VAppVersion(config types.BaseVmConfigInfo) string { return properties(config)[PropertyVersion] }

// NodeTemplate is a VM template as importing a Kubernetes node OVA leaves it.
type NodeTemplate struct {
	// Name is the template's name; Folder, ResourcePool and Datastore are inventory paths.
	Name, Folder, ResourcePool, Datastore string
	OVAVersion                            string
	// Distro's Version is written as the OVA writes it (20.04).
	Distro OS
}

// CreateNodeTemplate makes a VM template that carries a node OVA's vApp properties, as
// importing the OVA and marking it a template does; it returns its inventory path.
func CreateNodeTemplate(ctx context.Context, c *vim25.Client, t NodeTemplate) (string, error) {
	finder := find.NewFinder(c, true)
	folder, err := finder.Folder(ctx, t.Folder)
	if err != nil {
		return "", fmt.Errorf("folder %s: %w", t.Folder, err)
	}
	pool, err := finder.ResourcePool(ctx, t.ResourcePool)
	if err != nil {
		return "", fmt.Errorf("resource pool %s: %w", t.ResourcePool, err)
	}
	ds, err := finder.Datastore(ctx, t.Datastore)
	if err != nil {
		return "", fmt.Errorf("datastore %s: %w", t.Datastore, err)
	}
	var props []types.VAppPropertySpec
	for i, kv := range [][2]string{{PropertyVersion, t.OVAVersion}, {PropertyDistroName, t.Distro.Name},
		{PropertyDistroVersion, t.Distro.Version}, {PropertyDistroArch, t.Distro.Arch}} {
		props = append(props, types.VAppPropertySpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationAdd},
			Info: &types.VAppPropertyInfo{Key: int32(i + 1), Id: kv[0], Category: PropertyCategory, Type: "string", DefaultValue: kv[1]}})
	}
	task, err := folder.CreateVM(ctx, types.VirtualMachineConfigSpec{
		Name: t.Name, GuestId: string(types.VirtualMachineGuestOsIdentifierOtherLinux64Guest),
		Files:      &types.VirtualMachineFileInfo{VmPathName: fmt.Sprintf("[%s]", ds.Name())},
		VAppConfig: &types.VmConfigSpec{Property: props},
	}, pool, nil)
	if err != nil {
		return "", err
	}
	if err := task.Wait(ctx); err != nil {
		return "", fmt.Errorf("creating VM %s: %w", t.Name, err)
	}
	path := folder.InventoryPath + "/" + t.Name
	vm, err := finder.VirtualMachine(ctx, path)
	if err != nil {
		return "", err
	}
	if err := vm.MarkAsTemplate(ctx); err != nil {
		return "", fmt.Errorf("marking %s a template: %w", path, err)
	}
	return path, nil
}

// ParseCAPVCredentials reads CAPV's credentials file, `username: …` and `password: …`: the
// credentials.yaml of the capv-manager-bootstrap-credentials Secret that clusterctl fills from
// VSPHERE_USERNAME and VSPHERE_PASSWORD, and that CAPV's manager reads.
func ParseCAPVCredentials(data []byte) (username, password string, err error) {
	var creds struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if err := yaml.Unmarshal(data, &creds); err != nil {
		return "", "", fmt.Errorf("CAPV's credentials are not username and password lines: %w", err)
	}
	return creds.Username, creds.Password, nil
}
