package hypervisor

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/hostnet"
	"github.com/slipway-dev/slipway/internal/local/infrastructure"
	localvm "github.com/slipway-dev/slipway/internal/local/vm"
	"github.com/slipway-dev/slipway/internal/pki"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// Period is how often the hypervisor looks at the VMs.
const Period = time.Second

// ProviderIDPrefix is how vSphere's cloud provider names a node's VM: vsphere://<BIOS UUID>.
const ProviderIDPrefix = "vsphere://"

// Hypervisor boots the VMs of one vCenter simulator as nodes.
type Hypervisor struct {
	Client *vim25.Client
	// VCenter is the simulator's address, recorded in the local clusters it makes.
	VCenter string
	Store   cluster.Store
	// Executable is the slipway binary that runs the nodes' init processes and load balancers.
	Executable string
	Log        logr.Logger
	// CheckHost checks that this host can start a new node before a VM boots as one, as the
	// local provider checks before each machine; nil is the store's check
	// (cluster.Store.CheckHostLimits), which raises the kernel's limits where the simulator's
	// environment allows it.
	CheckHost func(controlPlanes, workers int, report func(string)) error
	// NodeImage checks that a node of a Kubernetes version can boot and returns the registry it
	// pulls from; nil is the store's check (cluster.Store.EnsureNodeImage), against the
	// local registry.
	NodeImage func(ctx context.Context, version string) (string, error)

	// mu orders the changes to the store: a pass of Sync and the boot of a VM as it powers on.
	// It is never held while calling the simulator, which may hold a VM's lock while it waits
	// for mu (PowerOn).
	mu sync.Mutex
	// failed keeps the last failure of each VM, by VM, so that it is logged once.
	failed map[string]string
	// powerOns counts the VMs booted by PowerOn, so that a pass of Sync knows when its list
	// of VMs is older than a node.
	powerOns int
	// held keeps, by VM, the host's refusal of a new node and when it came: the host is read
	// again after hostLimitRetry, not at every pass.
	held map[string]heldBack
}

// heldBack is a VM the host's limits keep from booting.
type heldBack struct {
	err error
	at  time.Time
}

// hostLimitRetry is how often the limits that hold a VM back are read again.
const hostLimitRetry = 30 * time.Second

// Run looks at the VMs every Period until ctx ends.
func (h *Hypervisor) Run(ctx context.Context) {
	t := time.NewTicker(Period)
	defer t.Stop()
	for {
		if err := h.Sync(ctx); err != nil && ctx.Err() == nil {
			h.Log.Error(err, "Hypervisor pass failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// vm is what the hypervisor reads of a VM.
type vm struct {
	ref                 types.ManagedObjectReference
	name, uuid, version string
	userdata            []byte
	ip                  string
}

// Sync stops the nodes whose VM is off or gone, then boots the powered-on VMs that are not
// nodes yet, supervises those that are, and reports their addresses.
func (h *Hypervisor) Sync(ctx context.Context) error {
	h.mu.Lock()
	seen := h.powerOns
	h.mu.Unlock()
	vms, err := h.poweredOn(ctx)
	if err != nil {
		return err
	}
	h.mu.Lock()
	var errs []error
	// A VM booted as it powered on since the list was read is not in it: its node stays.
	if h.powerOns == seen {
		if err := h.stopGone(vms); err != nil {
			errs = append(errs, err)
		}
	}
	type booting struct {
		v vm
		b *infrastructure.Bootstrap
	}
	var boots []booting
	on := map[string]bool{}
	for _, v := range vms {
		on[v.name] = true
		b, err := infrastructure.ParseBootstrap(v.userdata, "cloud-config")
		if err != nil {
			h.fail(v.name, err)
			continue
		}
		boots = append(boots, booting{v, b})
	}
	// Control-plane VMs that init go first: the others join their cluster.
	slices.SortStableFunc(boots, func(x, y booting) int { return cmp.Compare(btoi(!x.b.Init), btoi(!y.b.Init)) })
	type report struct {
		v    vm
		node cluster.NodeSpec
	}
	var reports []report
	for _, bt := range boots {
		node, ok := h.tryBoot(bt.v, bt.b)
		if ok && bt.v.ip != node.IP {
			reports = append(reports, report{bt.v, node})
		}
	}
	// A VM that is gone has no failure left to repeat, and nothing left to hold back.
	for name := range h.failed {
		if !on[name] {
			delete(h.failed, name)
		}
	}
	for name := range h.held {
		if !on[name] {
			delete(h.held, name)
		}
	}
	h.mu.Unlock()
	for _, r := range reports {
		if err := h.report(ctx, r.v, r.node); err != nil {
			errs = append(errs, fmt.Errorf("VM %s: reporting its guest IP: %w", r.v.name, err))
		}
	}
	return errors.Join(errs...)
}

// PowerOn boots a VM as it powers on, and returns the address and host name its guest is to
// report; false when the VM has no cloud-init or does not boot now, in which case Sync tries
// again. The simulator calls it inside the power-on task, so it reads the VM from m only.
func (h *Hypervisor) PowerOn(m mo.VirtualMachine) (ip, hostName string, ok bool) {
	v, ok := h.vmOf(m)
	if !ok {
		return "", "", false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	b, err := infrastructure.ParseBootstrap(v.userdata, "cloud-config")
	if err != nil {
		h.fail(v.name, err)
		return "", "", false
	}
	node, ok := h.tryBoot(v, b)
	if !ok {
		return "", "", false
	}
	h.powerOns++
	return node.IP, node.Name, true
}

// tryBoot boots a VM, logging why it does not (once per reason) or forgetting that it did not.
// h.mu is held.
func (h *Hypervisor) tryBoot(v vm, b *infrastructure.Bootstrap) (cluster.NodeSpec, bool) {
	node, err := h.boot(v, b)
	if err != nil {
		h.fail(v.name, err)
		return node, false
	}
	delete(h.failed, v.name)
	return node, true
}

// fail logs why a VM does not boot, once until the reason changes.
func (h *Hypervisor) fail(name string, err error) {
	if h.failed == nil {
		h.failed = map[string]string{}
	}
	if h.failed[name] != err.Error() {
		h.Log.Error(err, "VM does not boot as a node", "VM", name)
		h.failed[name] = err.Error()
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// poweredOn lists the powered-on VMs that carry a cloud-init.
func (h *Hypervisor) poweredOn(ctx context.Context) ([]vm, error) {
	m := view.NewManager(h.Client)
	v, err := m.CreateContainerView(ctx, h.Client.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, err
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	var all []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config.uuid", "config.template", "config.extraConfig",
		"config.vAppConfig", "runtime.powerState", "guest.ipAddress"}, &all); err != nil {
		return nil, err
	}
	var out []vm
	for _, m := range all {
		if v, ok := h.vmOf(m); ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// vmOf reads a VM that is powered on and carries a cloud-init.
func (h *Hypervisor) vmOf(m mo.VirtualMachine) (vm, bool) {
	if m.Config == nil || m.Config.Template || m.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
		return vm{}, false
	}
	extra := map[string]string{}
	for _, o := range m.Config.ExtraConfig {
		if v := o.GetOptionValue(); v != nil {
			extra[v.Key], _ = v.Value.(string)
		}
	}
	if extra["guestinfo.userdata"] == "" {
		return vm{}, false
	}
	data, err := decode(extra["guestinfo.userdata"], extra["guestinfo.userdata.encoding"])
	if err != nil {
		h.Log.Error(err, "VM's guestinfo.userdata cannot be read", "VM", m.Name)
		return vm{}, false
	}
	v := vm{ref: m.Self, name: m.Name, uuid: m.Config.Uuid, userdata: data, version: vcenter.VAppVersion(m.Config.VAppConfig)}
	if m.Guest != nil {
		v.ip = m.Guest.IpAddress
	}
	return v, true
}

// decode reads guestinfo data in its encoding, as cloud-init's VMware datasource does.
func decode(data, encoding string) ([]byte, error) {
	switch encoding {
	case "", "base64", "b64":
		return base64.StdEncoding.DecodeString(data)
	case "gzip+base64", "gz+b64":
		raw, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, err
		}
		r, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(r)
	default:
		return nil, fmt.Errorf("encoding %q is not one cloud-init reads (base64, gzip+base64)", encoding)
	}
}

// boot makes the VM a node of its cluster unless it is one, and starts the node unless it runs.
// h.mu is held.
func (h *Hypervisor) boot(v vm, b *infrastructure.Bootstrap) (cluster.NodeSpec, error) {
	host, err := h.endpoint(b.Endpoint)
	if err != nil {
		return cluster.NodeSpec{}, err
	}
	name, err := h.clusterOf(b, host)
	if err != nil {
		return cluster.NodeSpec{}, err
	}
	// The VM that runs kubeadm init of a new cluster is checked before the cluster is made: a
	// cluster without a node would be deleted at the next pass, and made again at the one after.
	checked := false
	if name == "" {
		if err := h.checkHost(v.name, true); err != nil {
			return cluster.NodeSpec{}, err
		}
		if name, err = h.newCluster(b, host); err != nil {
			return cluster.NodeSpec{}, err
		}
		checked = true
	}
	dirs, err := h.Store.Dirs(name)
	if err != nil {
		return cluster.NodeSpec{}, err
	}
	spec, err := cluster.ReadSpec(dirs)
	if err != nil {
		return cluster.NodeSpec{}, err
	}
	node, ok := spec.Node(v.name)
	if !ok {
		if !checked {
			if err := h.checkHost(v.name, b.ControlPlane); err != nil {
				return cluster.NodeSpec{}, err
			}
		}
		if node, err = h.addNode(dirs, spec, v, b); err != nil {
			return cluster.NodeSpec{}, err
		}
		h.Log.Info("VM boots as a node", "VM", v.name, "role", node.Role, "address", node.IP, "cluster", name,
			"kubernetesVersion", spec.NodeVersion(node), "bootstrap", map[bool]string{true: "kubeadm init", false: "kubeadm join"}[node.Init], "providerID", node.ProviderID)
	}
	if _, err := h.Store.StartLoadBalancer(name, h.Executable); err != nil {
		return cluster.NodeSpec{}, err
	}
	if _, err := h.Store.StartNode(name, node, h.Executable); err != nil {
		return cluster.NodeSpec{}, err
	}
	return node, nil
}

// endpoint returns the host of a control-plane endpoint the hypervisor serves: an address of
// the host's (vcenter.CheckSimulatorEndpoint), on the API server's port, where the cluster's
// load balancer listens as kube-vip would.
func (h *Hypervisor) endpoint(endpoint string) (string, error) {
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return "", fmt.Errorf("control-plane endpoint %q: %w", endpoint, err)
	}
	if port != strconv.Itoa(cluster.APIServerPort) {
		return "", fmt.Errorf("control-plane endpoint %s: the simulator serves control-plane endpoints on port %d", endpoint, cluster.APIServerPort)
	}
	return host, vcenter.CheckSimulatorEndpoint(host)
}

// checkHost refuses a new node that this host cannot start, naming the limit and how to raise
// it; a refusal stands for hostLimitRetry. h.mu is held.
func (h *Hypervisor) checkHost(name string, controlPlane bool) error {
	if held, ok := h.held[name]; ok && time.Since(held.at) < hostLimitRetry {
		return held.err
	}
	check := h.CheckHost
	if check == nil {
		check = h.Store.CheckHostLimits
	}
	controlPlanes, workers := 0, 1
	if controlPlane {
		controlPlanes, workers = 1, 0
	}
	err := check(controlPlanes, workers, func(msg string) { h.Log.Info(msg, "VM", name) })
	if err == nil {
		delete(h.held, name)
		return nil
	}
	err = fmt.Errorf("the host's limits hold the VM back (tried again every %s): %w", hostLimitRetry, err)
	if h.held == nil {
		h.held = map[string]heldBack{}
	}
	h.held[name] = heldBack{err: err, at: time.Now()}
	return err
}

// clusterOf returns the local cluster of a VM: the one whose control-plane endpoint it names,
// made by a VM that runs kubeadm init; "" for that VM when its cluster is still to be made.
func (h *Hypervisor) clusterOf(b *infrastructure.Bootstrap, endpoint string) (string, error) {
	specs, err := h.Store.List()
	if err != nil {
		return "", err
	}
	for _, s := range specs {
		if s.LoadBalancerIP == endpoint && s.Owner != nil && s.Owner.VCenter == h.VCenter {
			return s.Name, nil
		}
	}
	if !b.Init {
		return "", fmt.Errorf("no cluster serves control-plane endpoint %s yet: the VM waits for the control-plane VM that runs kubeadm init", endpoint)
	}
	for _, s := range specs {
		if s.Name == b.ClusterName {
			return "", fmt.Errorf("a local cluster named %s exists and is not made of this simulator's VMs: delete it (`slipway local cluster delete %s`) or name the Cluster otherwise", s.Name, s.Name)
		}
	}
	return "", nil
}

// newCluster makes the local cluster of a VM that runs kubeadm init, serving its endpoint.
func (h *Hypervisor) newCluster(b *infrastructure.Bootstrap, endpoint string) (string, error) {
	// The block is chosen, and the spec that holds it written, under the store's lock.
	unlock, err := h.Store.LockBlocks()
	if err != nil {
		return "", err
	}
	defer unlock()
	index, err := h.Store.FreeIndex()
	if err != nil {
		return "", err
	}
	dirs, err := h.Store.Dirs(b.ClusterName)
	if err != nil {
		return "", err
	}
	spec := &cluster.Spec{Name: b.ClusterName, KubernetesVersion: b.KubernetesVersion, Index: index, LoadBalancerIP: endpoint,
		Owner: &cluster.Owner{Name: b.ClusterName, VCenter: h.VCenter}, Runtime: cluster.RuntimeReal}
	spec.Egress = Egress(h.VCenter)
	spec.HostRegistries = hostRegistries(b.ImageRepository)
	// The nodes take the free block's addresses; the endpoint is the VIP's, which another
	// cluster of this host (another store's, or another simulator's) must not hold.
	used, err := localvm.UsedAddresses()
	if err != nil {
		return "", err
	}
	if slices.Contains(used, netip.MustParseAddr(endpoint)) {
		return "", fmt.Errorf("control-plane endpoint %s is held by another cluster of this host: set VSPHERE_CONTROL_PLANE_ENDPOINT to an unused address of %s", endpoint, hostnet.EndpointBlock)
	}
	if err := os.MkdirAll(dirs.Root, 0o700); err != nil {
		return "", err
	}
	return b.ClusterName, cluster.WriteSpec(dirs, spec)
}

// Egress is what the nodes of a simulator's VMs reach through this host (cluster.Spec.Egress), as
// a VM's network reaches its vCenter: the simulator, for CAPV and the vSphere cloud provider on
// them, when it serves on an address of this host off the bridge. One on the bridge is reached
// directly; one on loopback is a test's, whose VMs reach no vCenter.
func Egress(vcenter string) []string {
	host, _, err := net.SplitHostPort(vcenter)
	if err != nil || hostnet.Reaches(vcenter) {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return nil
	}
	return []string{vcenter}
}

// hostRegistries is what the nodes of a VM whose kubeadm pulls from repository reach on this
// host (cluster.Spec.HostRegistries): the registry of a copy on this host's loopback
// (TKG_CUSTOM_IMAGE_REPOSITORY, which TKR_DATA names then), as a VM's network reaches the
// registry of its site. Any other repository is one the local registry mirrors, or none a VM
// of this host reaches.
func hostRegistries(repository string) []string {
	registry, err := cluster.HostRegistry("", repository)
	if err != nil || registry == "" {
		return nil
	}
	return []string{registry}
}

// addNode lays out the VM's node in its cluster with the certificates kubeadm would make from
// the cloud-init: a control-plane VM carries the cluster's authorities; a worker's are the ones
// its cluster keeps.
func (h *Hypervisor) addNode(dirs cluster.Dirs, spec *cluster.Spec, v vm, b *infrastructure.Bootstrap) (cluster.NodeSpec, error) {
	var cas *pki.CAs
	var err error
	if b.ControlPlane {
		if cas, err = b.CAs(nil); err != nil {
			return cluster.NodeSpec{}, fmt.Errorf("the cloud-init's certificates: %w", err)
		}
	} else {
		if cas, err = pki.ReadCAs(dirs.PKI()); err != nil {
			return cluster.NodeSpec{}, fmt.Errorf("the cluster's authorities: %w", err)
		}
		if crt := b.Files["/etc/kubernetes/pki/ca.crt"]; len(crt) > 0 && !bytes.Equal(bytes.TrimSpace(crt), bytes.TrimSpace(cas.Cluster.CertPEM())) {
			return cluster.NodeSpec{}, errors.New("the cloud-init's ca.crt is not its cluster's")
		}
	}
	if b.Init && len(spec.ControlPlane()) > 0 {
		return cluster.NodeSpec{}, fmt.Errorf("the cloud-init runs kubeadm init but cluster %s already has a control plane", spec.Name)
	}
	role := cluster.RoleWorker
	if b.ControlPlane {
		role = cluster.RoleControlPlane
	}
	node, err := spec.AddNode(v.name, role)
	if err != nil {
		return cluster.NodeSpec{}, err
	}
	// The image's VERSION is the OVA's (v1.35.4+vmware.1-tkg.1-ubuntu-2004); its kubelet is the
	// Kubernetes version before the TKG build.
	node.KubernetesVersion, _, _ = strings.Cut(v.version, "-tkg.")
	if node.KubernetesVersion == "" {
		node.KubernetesVersion = b.KubernetesVersion
	}
	if node.KubernetesVersion == "" {
		node.KubernetesVersion = spec.KubernetesVersion
	}
	node.ProviderID = ProviderIDPrefix + v.uuid
	node.Init, node.Join = b.Init, b.ControlPlane && !b.Init
	spec.Nodes[len(spec.Nodes)-1] = node
	if b.Init {
		if err := cas.Write(dirs.PKI()); err != nil {
			return cluster.NodeSpec{}, err
		}
	}
	if err := h.prepare(dirs, spec, node, v.userdata); err != nil {
		return cluster.NodeSpec{}, err
	}
	return node, cluster.WriteSpec(dirs, spec)
}

// prepare writes a new node's state: it boots from the VM's cloud-init as the VM would, kubeadm
// making what it needs.
func (h *Hypervisor) prepare(dirs cluster.Dirs, spec *cluster.Spec, node cluster.NodeSpec, userData []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	image := h.NodeImage
	if image == nil {
		image = h.Store.EnsureNodeImage
	}
	registry, err := image(ctx, spec.NodeVersion(node))
	if err != nil {
		return err
	}
	return cluster.PrepareNodeState(dirs, spec, node, node.ProviderID, userData, registry)
}

// report tells vCenter the VM's guest IP and host name, as VMware Tools does.
func (h *Hypervisor) report(ctx context.Context, v vm, node cluster.NodeSpec) error {
	task, err := object.NewVirtualMachine(h.Client, v.ref).Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
		// vcsim's way to set what VMware Tools reports.
		&types.OptionValue{Key: "SET.guest.ipAddress", Value: node.IP},
		&types.OptionValue{Key: "SET.guest.hostName", Value: node.Name},
	}})
	if err != nil {
		return err
	}
	return task.Wait(ctx)
}

// Shutdown stops every node of the simulator's VMs and deletes their clusters, as the VMs are
// gone with the simulator.
func (h *Hypervisor) Shutdown() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stopGone(nil)
}

// stopGone stops the nodes whose VM is no longer powered on, and deletes a cluster left with
// no node. h.mu is held.
func (h *Hypervisor) stopGone(vms []vm) error {
	on := map[string]bool{}
	for _, v := range vms {
		on[v.name] = true
	}
	specs, err := h.Store.List()
	if err != nil {
		return err
	}
	var errs []error
	for _, spec := range specs {
		if spec.Owner == nil || spec.Owner.VCenter != h.VCenter {
			continue
		}
		dirs, err := h.Store.Dirs(spec.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, n := range spec.Nodes {
			if on[n.Name] {
				continue
			}
			if err := h.Store.StopNode(spec.Name, n.Name); err != nil {
				errs = append(errs, err)
				continue
			}
			spec.RemoveNode(n.Name)
			if err := cluster.WriteSpec(dirs, spec); err != nil {
				errs = append(errs, err)
			}
			h.Log.Info("VM is powered off or destroyed: stopped its node", "VM", n.Name, "cluster", spec.Name)
		}
		if len(spec.Nodes) == 0 {
			if err := h.Store.Delete(spec.Name, ""); err != nil {
				errs = append(errs, err)
				continue
			}
			h.Log.Info("Cluster has no VM left: deleted it", "cluster", spec.Name)
		}
	}
	return errors.Join(errs...)
}
