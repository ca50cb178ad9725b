package simulator_test

import (
	"net/url"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"

	"github.com/slipway-dev/slipway/internal/test/vcentertest"
	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
)

func TestSimulatorServesTheSeedsInventory(t *testing.T) {
	dir := t.TempDir()
	o := simulator.Options{Address: vcentertest.FreeAddress(t), Dir: dir, Username: simulator.DefaultUsername, Password: "s3cret"}
	s, err := simulator.Start(t.Context(), o)
	if err != nil {
		t.Fatal(err)
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
