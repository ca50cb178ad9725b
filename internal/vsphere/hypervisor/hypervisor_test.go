package hypervisor_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"

	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/pki"
	"github.com/slipway-dev/slipway/internal/test/vcentertest"
	"github.com/slipway-dev/slipway/internal/vsphere/hypervisor"
	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// cloudInit is a kubeadm bootstrap provider's cloud-config: kubeadm init with the cluster's
// authorities for a control-plane VM, kubeadm join with only ca.crt for a worker.
func cloudInit(t *testing.T, cas *pki.CAs, init bool) string {
	t.Helper()
	return cloudInitFor(t, cas, init, vcenter.SimulatorEndpoint)
}

// cloudInitFor is cloudInit for a cluster whose control-plane endpoint is endpoint.
func cloudInitFor(t *testing.T, cas *pki.CAs, init bool, endpoint string) string {
	t.Helper()
	return cloudInitFrom(t, cas, init, endpoint, "projects.registry.vmware.com/tkg")
}

// cloudInitFrom is cloudInitFor whose kubeadm pulls from imageRepository.
func cloudInitFrom(t *testing.T, cas *pki.CAs, init bool, endpoint, imageRepository string) string {
	t.Helper()
	dir := t.TempDir()
	if err := cas.Write(dir); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("#cloud-config\nwrite_files:\n")
	file := func(path string, content []byte) {
		fmt.Fprintf(&b, "- path: %s\n  encoding: base64\n  content: %s\n", path, base64.StdEncoding.EncodeToString(content))
	}
	names := []string{"ca.crt"}
	if init {
		names = []string{"ca.crt", "ca.key", "etcd/ca.crt", "etcd/ca.key", "front-proxy-ca.crt", "front-proxy-ca.key", "sa.key", "sa.pub"}
	}
	for _, name := range names {
		content, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		file("/etc/kubernetes/pki/"+name, content)
	}
	if init {
		file("/run/kubeadm/kubeadm.yaml", []byte("kind: ClusterConfiguration\nclusterName: wc1\ncontrolPlaneEndpoint: "+endpoint+":6443\nkubernetesVersion: v1.35.4\nimageRepository: "+imageRepository+"\n---\nkind: InitConfiguration\n"))
		b.WriteString("runcmd:\n- kubeadm init --config /run/kubeadm/kubeadm.yaml\n")
	} else {
		file("/run/kubeadm/kubeadm-join-config.yaml", []byte("kind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    apiServerEndpoint: "+endpoint+":6443\n"))
		b.WriteString("runcmd:\n- kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml\n")
	}
	return b.String()
}

// simulatorWithTemplate starts a simulator with a node template of v1.34.3 and logs in; the CAs
// are those of a cluster its VMs make.
func simulatorWithTemplate(t *testing.T) (*simulator.Server, *govmomi.Client, *object.VirtualMachine, *pki.CAs) {
	t.Helper()
	s := vcentertest.Start(t)
	c, err := s.Login(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	template := vcentertest.Template(t, s, "node-v1.34.3", "v1.34.3+vmware.1-tkg.1-ubuntu-2004")
	cas, err := pki.GenerateCAs()
	if err != nil {
		t.Fatal(err)
	}
	return s, c, template, cas
}

// TestVMsBootAsNodes: a powered-on clone with a cloud-init becomes a node of a local cluster
// named by its kubeadm configuration, with the VM's BIOS UUID as providerID and the Kubernetes
// version of its image's VERSION; the VM reports the node's address as its guest IP, by the end
// of its power-on task when it can boot then; a worker VM powered on before its control plane
// joins the same cluster at the next pass; powering the VMs off stops the nodes and deletes the
// cluster.
func TestVMsBootAsNodes(t *testing.T) {
	ctx := t.Context()
	s, c, template, cas := simulatorWithTemplate(t)
	clone := func(name, userdata string) *object.VirtualMachine {
		return vcentertest.Clone(t, template, name, map[string]string{
			"guestinfo.userdata": base64.StdEncoding.EncodeToString([]byte(userdata)), "guestinfo.userdata.encoding": "base64"}, true)
	}
	store := cluster.Store{Root: t.TempDir()}
	var logs bytes.Buffer
	h := &hypervisor.Hypervisor{Client: c.Client, VCenter: s.URL.Host, Store: store,
		// The nodes' init and the load balancer are not what is tested: a program that exits
		// stands in, and no image is pulled.
		Executable: "/bin/true", NodeImage: noImage,
		Log: funcr.New(func(prefix, args string) { fmt.Fprintln(io.MultiWriter(&logs, os.Stderr), prefix, args) }, funcr.Options{})}
	t.Cleanup(func() { _ = store.Delete("wc1", "") })
	s.OnPowerOn(h.PowerOn)
	guestIP := func(vm *object.VirtualMachine) string {
		var props mo.VirtualMachine
		if err := vm.Properties(ctx, vm.Reference(), []string{"guest.ipAddress"}, &props); err != nil {
			t.Fatal(err)
		}
		if props.Guest == nil {
			return ""
		}
		return props.Guest.IpAddress
	}

	// The worker's cluster does not exist yet: it cannot boot as it powers on.
	worker := clone("wc1-md-0-a", cloudInit(t, cas, false))
	if ip := guestIP(worker); ip != "" {
		t.Errorf("worker VM reports guest IP %s before its cluster exists", ip)
	}
	cp := clone("wc1-cp-a", cloudInit(t, cas, true))
	spec, err := store.Get("wc1")
	if err != nil {
		t.Fatalf("no local cluster wc1 once its control-plane VM is on: %v\n%s", err, logs.String())
	}
	if node, ok := spec.Node("wc1-cp-a"); !ok || guestIP(cp) != node.IP {
		t.Errorf("after its power-on task, control-plane VM reports guest IP %q; its node: %+v", guestIP(cp), node)
	}

	if err := h.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if spec, err = store.Get("wc1"); err != nil {
		t.Fatal(err)
	}
	if spec.LoadBalancerIP != vcenter.SimulatorEndpoint || spec.Owner == nil || spec.Owner.VCenter != s.URL.Host || !spec.Real() {
		t.Errorf("cluster wc1: endpoint %s owner %+v runtime %q", spec.LoadBalancerIP, spec.Owner, spec.Runtime)
	}
	// The test's simulator serves on loopback: its VMs reach no vCenter (Egress). kubeadm pulls
	// from the repository the local registry mirrors: no registry of this host's is named.
	if len(spec.Egress) != 0 || len(spec.HostRegistries) != 0 {
		t.Errorf("cluster wc1: egress %q, host registries %q, want none for a simulator on loopback pulling from the mirrored repository", spec.Egress, spec.HostRegistries)
	}
	for _, vm := range []*object.VirtualMachine{cp, worker} {
		var props mo.VirtualMachine
		if err := vm.Properties(ctx, vm.Reference(), []string{"name", "config.uuid", "guest.ipAddress"}, &props); err != nil {
			t.Fatal(err)
		}
		node, ok := spec.Node(props.Name)
		if !ok {
			t.Errorf("VM %s is no node of wc1: %+v\n%s", props.Name, spec.Nodes, logs.String())
			continue
		}
		if node.ProviderID != "vsphere://"+props.Config.Uuid || node.KubernetesVersion != "v1.34.3+vmware.1" {
			t.Errorf("node %s: providerID %s version %s, want vsphere://%s and v1.34.3+vmware.1, the template's", node.Name, node.ProviderID, node.KubernetesVersion, props.Config.Uuid)
		}
		if props.Guest == nil || props.Guest.IpAddress != node.IP {
			t.Errorf("VM %s reports guest IP %+v, want its node's %s", props.Name, props.Guest, node.IP)
		}
		wantRole := cluster.RoleWorker
		if vm == cp {
			wantRole = cluster.RoleControlPlane
		}
		if node.Role != wantRole || node.Init != (vm == cp) {
			t.Errorf("node %s: role %s init %v", node.Name, node.Role, node.Init)
		}
	}

	for _, vm := range []*object.VirtualMachine{worker, cp} {
		task, err := vm.PowerOff(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := task.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get("wc1"); err == nil {
		t.Errorf("cluster wc1 outlived its VMs\n%s", logs.String())
	}
}

// TestVMsPullFromACopyOnThisHost: a VM whose kubeadm pulls from a registry on this host's
// loopback (a TKG_CUSTOM_IMAGE_REPOSITORY copy, which TKR_DATA names) makes a cluster whose
// nodes reach that registry, as the local provider's nodes reach the copy of their LocalCluster.
func TestVMsPullFromACopyOnThisHost(t *testing.T) {
	s, c, template, cas := simulatorWithTemplate(t)
	store := cluster.Store{Root: t.TempDir()}
	h := &hypervisor.Hypervisor{Client: c.Client, VCenter: s.URL.Host, Store: store, Executable: "/bin/true", NodeImage: noImage,
		Log: funcr.New(func(prefix, args string) { t.Log(prefix, args) }, funcr.Options{})}
	t.Cleanup(func() { _ = store.Delete("wc1", "") })
	s.OnPowerOn(h.PowerOn)
	userdata := cloudInitFrom(t, cas, true, vcenter.SimulatorEndpoint, "127.0.0.1:5002/tkg")
	vcentertest.Clone(t, template, "wc1-cp-a", map[string]string{
		"guestinfo.userdata": base64.StdEncoding.EncodeToString([]byte(userdata)), "guestinfo.userdata.encoding": "base64"}, true)
	spec, err := store.Get("wc1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(spec.HostRegistries, []string{"127.0.0.1:5002"}) {
		t.Errorf("cluster wc1 reaches host registries %q, want the copy's 127.0.0.1:5002", spec.HostRegistries)
	}
}

// TestHostLimitsHoldAVM: a VM that powers on when the host cannot start another node does not
// boot; the simulator's log names the limit, and the host is not read again at every pass.
func TestHostLimitsHoldAVM(t *testing.T) {
	ctx := t.Context()
	s, c, template, cas := simulatorWithTemplate(t)
	store := cluster.Store{Root: t.TempDir()}
	var logs bytes.Buffer
	checks := 0
	h := &hypervisor.Hypervisor{Client: c.Client, VCenter: s.URL.Host, Store: store, Executable: "/bin/true",
		Log: funcr.New(func(prefix, args string) { fmt.Fprintln(&logs, prefix, args) }, funcr.Options{}),
		CheckHost: func(controlPlanes, workers int, _ func(string)) error {
			checks++
			if controlPlanes != 1 || workers != 0 {
				t.Errorf("a control-plane VM asked the host for %d control-plane nodes and %d workers", controlPlanes, workers)
			}
			return errors.New("this host cannot start 1 more nodes:\n  fs.inotify.max_user_instances is 128 with 125 in use")
		}}
	s.OnPowerOn(h.PowerOn)
	cp := vcentertest.Clone(t, template, "wc1-cp-a", map[string]string{
		"guestinfo.userdata": base64.StdEncoding.EncodeToString([]byte(cloudInit(t, cas, true))), "guestinfo.userdata.encoding": "base64"}, true)
	for range 3 {
		if err := h.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if spec, err := store.Get("wc1"); err == nil {
		if _, ok := spec.Node("wc1-cp-a"); ok {
			t.Errorf("the VM booted as a node though the host refused it")
		}
	}
	var props mo.VirtualMachine
	if err := cp.Properties(ctx, cp.Reference(), []string{"guest.ipAddress"}, &props); err != nil {
		t.Fatal(err)
	}
	if props.Guest != nil && props.Guest.IpAddress != "" {
		t.Errorf("a VM held back reports guest IP %s", props.Guest.IpAddress)
	}
	if checks != 1 {
		t.Errorf("the host's limits were read %d times in four tries within %s, want once", checks, "30s")
	}
	// Its cluster is not made while the VM waits: no cluster comes and goes at every pass.
	if _, err := store.Get("wc1"); err == nil || strings.Contains(logs.String(), "deleted it") {
		t.Errorf("a cluster was made for the VM held back:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "fs.inotify.max_user_instances is 128 with 125 in use") || strings.Count(logs.String(), "VM does not boot as a node") != 1 {
		t.Errorf("the simulator's log does not name the limit once:\n%s", logs.String())
	}
}

// TestEndpointsOfTheSimulator: the simulator serves its VMs' control-plane endpoints in the
// bridge's block for them; a VM whose endpoint is elsewhere does not boot, and the log names the
// variable and the addresses to choose; one whose endpoint fits goes on to the host's check.
func TestEndpointsOfTheSimulator(t *testing.T) {
	ctx := t.Context()
	const refused, accepted = "127.0.100.1", vcenter.SimulatorEndpoint
	s, c, template, cas := simulatorWithTemplate(t)
	var logs bytes.Buffer
	checked := 0
	h := &hypervisor.Hypervisor{Client: c.Client, VCenter: s.URL.Host, Store: cluster.Store{Root: t.TempDir()}, Executable: "/bin/true", NodeImage: noImage,
		Log: funcr.New(func(prefix, args string) { fmt.Fprintln(&logs, prefix, args) }, funcr.Options{}),
		CheckHost: func(_, _ int, _ func(string)) error {
			checked++
			return errors.New("held back by the test")
		}}
	for _, endpoint := range []string{refused, accepted} {
		vcentertest.Clone(t, template, "cp-"+endpoint, map[string]string{
			"guestinfo.userdata": base64.StdEncoding.EncodeToString([]byte(cloudInitFor(t, cas, true, endpoint))), "guestinfo.userdata.encoding": "base64"}, true)
	}
	if err := h.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	refusal := ""
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "cp-"+refused) {
			refusal += line
		}
	}
	for _, want := range []string{"198.18.255.0/24", "VSPHERE_CONTROL_PLANE_ENDPOINT", "such as 198.18.255.1"} {
		if !strings.Contains(refusal, want) {
			t.Errorf("the refusal of endpoint %s does not say %q:\n%s", refused, want, logs.String())
		}
	}
	if checked != 1 {
		t.Errorf("the host was checked %d times, want once (the VM of endpoint %s)", checked, accepted)
	}
}

// TestEgressOfVMs: a simulator off the bridge is its VMs' egress; one on the bridge or on loopback
// is not.
func TestEgressOfVMs(t *testing.T) {
	for vcenter, want := range map[string][]string{
		"203.0.113.7:8989": {"203.0.113.7:8989"},
		"198.18.0.1:8989":  nil,
		"127.0.0.1:8989":   nil,
	} {
		if got := hypervisor.Egress(vcenter); !slices.Equal(got, want) {
			t.Errorf("Egress(%s) = %q, want %q", vcenter, got, want)
		}
	}
}

// noImage stands in for the local registry's check of a node's images.
func noImage(context.Context, string) (string, error) { return "127.0.0.1:5000", nil }
