package simulator_test

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"

	"github.com/slipway-dev/slipway/internal/test/vcentertest"
	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

func TestSimulatorServesTheSeedsInventory(t *testing.T) {
	dir := t.TempDir()
	// A template an earlier run imported: its files outlive that run's inventory.
	left := filepath.Join(dir, "datastore", "ubuntu-2004-kube-v1.35.4+vmware.1", "disk.vmdk")
	if err := os.MkdirAll(filepath.Dir(left), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(left, []byte("left by an earlier run"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := simulator.Options{Address: vcentertest.FreeAddress(t), Dir: dir, Username: simulator.DefaultUsername, Password: "s3cret"}
	s, err := simulator.Start(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file of an earlier run's datastore outlived the start (an import of its template would be refused): %v", err)
	}
	c, err := s.Login(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if v := c.ServiceContent.About.Version; v != "7.0.3" {
		t.Errorf("version %s, want 7.0.3 (the seeds' vSphere 7.0)", v)
	}
	finder := find.NewFinder(c.Client, true)
	ctx := t.Context()
	for path, lookup := range map[string]func(string) error{
		simulator.Datacenter:   func(p string) error { _, err := finder.Datacenter(ctx, p); return err },
		simulator.Cluster:      func(p string) error { _, err := finder.ClusterComputeResource(ctx, p); return err },
		simulator.ResourcePool: func(p string) error { _, err := finder.ResourcePool(ctx, p); return err },
		simulator.Datastore:    func(p string) error { _, err := finder.Datastore(ctx, p); return err },
		simulator.Network:      func(p string) error { _, err := finder.Network(ctx, p); return err },
		simulator.Folder:       func(p string) error { _, err := finder.Folder(ctx, p); return err },
	} {
		if err := lookup(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	hosts, err := finder.HostSystemList(ctx, simulator.Cluster+"/*")
	if err != nil || len(hosts) != 2 {
		t.Errorf("cluster0 has %d hosts (%v), want 2", len(hosts), err)
	}

	// Only its user logs in.
	u := *s.URL
	u.User = url.UserPassword(simulator.DefaultUsername, "wrong")
	if _, err := govmomi.NewClient(ctx, &u, true); err == nil {
		t.Error("a wrong password logged in")
	}

	// The certificate is kept: a restart keeps the thumbprint users configured.
	thumbprint := s.Thumbprint
	s.Close()
	o.Address = vcentertest.FreeAddress(t)
	again, err := simulator.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Thumbprint != thumbprint {
		t.Errorf("thumbprint changed across restarts: %s, then %s", thumbprint, again.Thumbprint)
	}

	if _, err := simulator.Start(ctx, simulator.Options{Address: "10.1.2.3:8989", Dir: dir}); err == nil {
		t.Error("an address off loopback was accepted")
	}
}

// vCenter keeps a clone spec's extraConfig and the source's vApp properties; vcsim v0.53.0 does
// neither, and CAPV's cloud-init (guestinfo.userdata) and a node image's VERSION reach a clone
// only through the simulator's fix.
func TestCloneKeepsExtraConfigAndVAppProperties(t *testing.T) {
	ctx := t.Context()
	s := vcentertest.Start(t)
	template := vcentertest.Template(t, s, "node-v1.35.4", "v1.35.4+vmware.1")
	vm := vcentertest.Clone(t, template, "node-0", map[string]string{"guestinfo.userdata": "I2Nsb3VkLWNvbmZpZw=="}, false)
	var clone mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.extraConfig", "config.vAppConfig"}, &clone); err != nil {
		t.Fatal(err)
	}
	userdata := ""
	for _, o := range clone.Config.ExtraConfig {
		if v := o.GetOptionValue(); v.Key == "guestinfo.userdata" {
			userdata, _ = v.Value.(string)
		}
	}
	if userdata != "I2Nsb3VkLWNvbmZpZw==" {
		t.Errorf("the clone's guestinfo.userdata is %q, want the clone spec's", userdata)
	}
	version := ""
	if clone.Config.VAppConfig != nil {
		for _, p := range clone.Config.VAppConfig.GetVmConfigInfo().Property {
			if p.Id == vcenter.PropertyVersion {
				version = p.DefaultValue
			}
		}
	}
	if version != "v1.35.4+vmware.1" {
		t.Errorf("the clone's vApp VERSION is %q, want the template's", version)
	}
}
