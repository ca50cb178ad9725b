package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	capvv1 "sigs.k8s.io/cluster-api-provider-vsphere/api/govmomi/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/controllers/packaging/deploy"
	"github.com/slipway-dev/slipway/internal/scheme"
	"github.com/slipway-dev/slipway/internal/test/vcentertest"
	"github.com/slipway-dev/slipway/internal/vsphere/prerequisites"
	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
)

// TestCAPVOnTheSimulator serves the vCenter simulator, builds and imports the node OVA of
// v1.35.4, and makes a bootstrap cluster with the vsphere infrastructure provider: clusterctl
// installs CAPV v1.16.1 from the local repository, its reconcilers and webhooks running in the
// capv-controller-manager component, and tkg-pkg the vSphere ClusterClass. A workload Cluster
// written by `cluster create --dry-run` from a flat vSphere file is applied: CAPV clones its
// control-plane VM from the release's template into /dc0/vm/folder0 and powers it on, and the
// simulator boots it as a node from CAPV's cloud-init: the VM reports its guest IP, the node
// registers as vsphere://<BIOS UUID> and the Machine becomes its. Deleting the Cluster destroys
// the VM, which stops the node.
func TestCAPVOnTheSimulator(t *testing.T) {
	_, repo := pushPackages(t)
	ctx := t.Context()

	if out, err := runSlipway(t, "vsphere", "simulator", "start", "--address", vcentertest.FreeAddress(t)); err != nil {
		t.Fatalf("simulator start: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := runSlipwayContext(context.Background(), "vsphere", "simulator", "stop"); err != nil {
			t.Errorf("simulator stop: %v\n%s", err, out)
		}
	})
	endpoint, err := simulator.Daemon{Dir: filepath.Join(home, "vsphere", "simulator")}.Endpoint()
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, v := range endpoint.Variables() {
		vars[v[0]] = v[1]
		t.Setenv(v[0], v[1])
	}

	dir := t.TempDir()
	image := filepath.Join(dir, "node.ova")
	if out, err := runSlipway(t, "vsphere", "ova", "build", "--kubernetes-release", "v1.35.4+vmware.1-tkg.1", "-o", image); err != nil {
		t.Fatalf("ova build: %v\n%s", err, out)
	}
	const template = simulator.Folder + "/ubuntu-2004-kube-v1.35.4+vmware.1"
	if out, err := runSlipway(t, "vsphere", "ova", "import", image); err != nil || !strings.Contains(out, "as the VM template "+template) {
		t.Fatalf("ova import: %v\n%s", err, out)
	}

	start := time.Now()
	lc := createCluster(t, "e2e-vboot", "--bootstrap", "--package-repository", repo, "--infrastructure-provider", "vsphere")
	t.Logf("bootstrap cluster with CAPV after %s", time.Since(start).Round(100*time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			for _, ns := range []string{"capv-system", "tkg-system", "default"} {
				dumpPods(t, lc, ns)
			}
		}
	})
	for _, line := range []string{`Installing provider="infrastructure-vsphere" version="v1.16.1" targetNamespace="capv-system"`,
		"Passed waiting on provider infrastructure-vsphere after ", "successfully reconciled package: tkr-vsphere-resolver\n",
		"successfully reconciled package: tkg-clusterclass-vsphere\n"} {
		if !strings.Contains(lc.created, line) {
			t.Errorf("the bootstrap output lacks %q", line)
		}
	}
	if strings.Contains(lc.created, "infrastructure-local") {
		t.Error("the local infrastructure provider was installed beside CAPV")
	}
	pods := &corev1.PodList{}
	if err := lc.client.List(ctx, pods, client.InNamespace("capv-system")); err != nil {
		t.Fatal(err)
	}
	running := false
	for _, p := range pods.Items {
		running = running || strings.HasPrefix(p.Name, "capv-controller-manager-") && p.Status.Phase == corev1.PodRunning &&
			p.Annotations["local.slipway.dev/simulated"] == ""
	}
	if !running {
		t.Fatalf("no running, not simulated capv-controller-manager pod: %+v", pods.Items)
	}

	// The workload Cluster as `cluster create` writes it from seeds/001's variables.
	file := filepath.Join(dir, "e2e-vc.yaml")
	content := "CLUSTER_NAME: e2e-vc\nINFRASTRUCTURE_PROVIDER: vsphere\nCLUSTER_PLAN: dev\nCNI: antrea\nOS_NAME: ubuntu\nOS_VERSION: \"20.04\"\n" +
		"VSPHERE_CONTROL_PLANE_ENDPOINT: 127.0.100.1\nVSPHERE_SSH_AUTHORIZED_KEY: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfcGigZ63XnMoqRl2PKwyhzQ6ChfGxQJhqvD/5SujkZ e2e@example\n"
	for k, v := range vars {
		content += fmt.Sprintf("%s: %q\n", k, v)
	}
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runSlipway(t, "cluster", "create", "-f", file, "--dry-run", "--kubeconfig", kubeconfigOf(t, lc))
	if err != nil {
		t.Fatalf("cluster create --dry-run: %v\n%s", err, out)
	}
	for _, line := range []string{`Setting config variable "VSPHERE_DATACENTER" to value "/dc0"`,
		"Checking if VSPHERE_CONTROL_PLANE_ENDPOINT 127.0.100.1 is already in use"} {
		if !strings.Contains(out, line) {
			t.Errorf("cluster create --dry-run lacks %q:\n%s", line, out)
		}
	}
	objs, err := deploy.Parse([]byte(out[strings.Index(out, "apiVersion:"):]))
	if err != nil {
		t.Fatalf("the dry run's objects: %v\n%s", err, out)
	}
	for _, o := range objs {
		if err := lc.client.Create(ctx, o); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}

	// CAPV clones the first control-plane VM from the template, with its BIOS UUID, and powers it
	// on.
	vc, _, err := prerequisites.Connect(ctx, prerequisites.Environment{Server: endpoint.Address, Username: endpoint.Username,
		Password: endpoint.Password, Thumbprint: vars["VSPHERE_TLS_THUMBPRINT"]})
	if err != nil {
		t.Fatal(err)
	}
	finder := find.NewFinder(vc.Client)
	s := scheme.New()
	if err := capvv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	capv, err := client.New(lc.config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	var vmName string
	eventually(t, 3*time.Minute, "a VSphereVM of e2e-vc powered on in the simulator", func() error {
		vms := &capvv1.VSphereVMList{}
		if err := capv.List(ctx, vms, client.InNamespace("default"), client.MatchingLabels{clusterv1.ClusterNameLabel: "e2e-vc"}); err != nil {
			return err
		}
		if len(vms.Items) != 1 {
			return fmt.Errorf("%d VSphereVMs", len(vms.Items))
		}
		v := vms.Items[0]
		if v.Spec.Template != template && v.Spec.Template != "ubuntu-2004-kube-v1.35.4+vmware.1" {
			return fmt.Errorf("VSphereVM %s clones %q, not the release's template", v.Name, v.Spec.Template)
		}
		if v.Status.VMRef == "" {
			return fmt.Errorf("VSphereVM %s has no VM yet: %+v", v.Name, v.Status.Conditions)
		}
		vmName = v.Name
		vm, err := finder.VirtualMachine(ctx, simulator.Folder+"/"+v.Name)
		if err != nil {
			return err
		}
		var props mo.VirtualMachine
		if err := vm.Properties(ctx, vm.Reference(), []string{"runtime.powerState", "config"}, &props); err != nil {
			return err
		}
		if props.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
			return fmt.Errorf("VM %s is %s", v.Name, props.Runtime.PowerState)
		}
		if props.Config.Uuid != v.Spec.BiosUUID {
			return fmt.Errorf("VM %s has the BIOS UUID %s, its VSphereVM %q", v.Name, props.Config.Uuid, v.Spec.BiosUUID)
		}
		return nil
	})

	// The VM boots as the cluster's first node: it reports its guest IP, and the node, registered
	// as the VM's BIOS UUID, is the Machine's.
	eventually(t, 3*time.Minute, "the control-plane VM booted as the Machine's node", func() error {
		vm, err := finder.VirtualMachine(ctx, simulator.Folder+"/"+vmName)
		if err != nil {
			return err
		}
		var props mo.VirtualMachine
		if err := vm.Properties(ctx, vm.Reference(), []string{"guest.ipAddress", "config.uuid"}, &props); err != nil {
			return err
		}
		if props.Guest == nil || props.Guest.IpAddress == "" {
			return fmt.Errorf("VM %s reports no guest IP", vmName)
		}
		machine := &clusterv1.Machine{}
		if err := lc.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: vmName}, machine); err != nil {
			return err
		}
		if want := "vsphere://" + props.Config.Uuid; machine.Spec.ProviderID != want {
			return fmt.Errorf("Machine %s has providerID %q, want %q", vmName, machine.Spec.ProviderID, want)
		}
		if !machine.Status.NodeRef.IsDefined() {
			return fmt.Errorf("Machine %s has no node yet (VM IP %s): %+v", vmName, props.Guest.IpAddress, machine.Status.Conditions)
		}
		for _, a := range machine.Status.Addresses {
			if a.Address == props.Guest.IpAddress {
				return nil
			}
		}
		return fmt.Errorf("Machine %s addresses %v lack the VM's guest IP %s", vmName, machine.Status.Addresses, props.Guest.IpAddress)
	})

	// Deleting the Cluster destroys the VM, and the VM's node stops.
	if err := lc.client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e2e-vc"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the Cluster and its VM gone", func() error {
		if err := lc.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "e2e-vc"}, &clusterv1.Cluster{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Cluster is still there (%v)", err)
		}
		vms, err := finder.VirtualMachineList(ctx, simulator.Folder+"/*")
		if err != nil {
			return err
		}
		for _, vm := range vms {
			if vm.Name() == vmName {
				return fmt.Errorf("VM %s is still in %s", vmName, simulator.Folder)
			}
		}
		if _, err := os.Stat(filepath.Join(home, "local", "e2e-vc")); err == nil {
			return errors.New("the local cluster of e2e-vc's VMs is still there")
		}
		return nil
	})
}
