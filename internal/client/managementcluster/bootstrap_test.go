package managementcluster

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/internal/config"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
)

// TestBootstrapEgress checks what a bootstrap cluster's nodes reach through this host: on
// vSphere the vCenter and the control-plane endpoint, each with its port, unless it is on the
// bridge; on the local provider nothing.
func TestBootstrapEgress(t *testing.T) {
	for _, tc := range []struct {
		infrastructure, server, endpoint string
		port                             int
		want                             []string
	}{
		{"local", "", "", 0, nil},
		{"vsphere", "198.18.0.1:8989", "198.18.255.1", 0, nil},
		{"vsphere", "203.0.113.7:8989", "198.18.255.1", 0, []string{"203.0.113.7:8989"}},
		{"vsphere", "vcenter.example.com", "10.0.0.10", 0, []string{"vcenter.example.com:443", "10.0.0.10:6443"}},
		{"vsphere", "10.0.0.5", "10.0.0.10:6443", 0, []string{"10.0.0.5:443", "10.0.0.10:6443"}},
		{"vsphere", "10.0.0.5", "", 0, []string{"10.0.0.5:443"}},
		// CLUSTER_API_SERVER_PORT moves the endpoint's port; a URL names the vCenter's host.
		{"vsphere", "https://vcenter.example.com/sdk", "10.0.0.10", 8443, []string{"vcenter.example.com:443", "10.0.0.10:8443"}},
		{"vsphere", "https://10.0.0.5:9443/sdk", "", 0, []string{"10.0.0.5:9443"}},
	} {
		if got := BootstrapEgress(tc.infrastructure, tc.server, tc.endpoint, tc.port); !slices.Equal(got, tc.want) {
			t.Errorf("BootstrapEgress(%s, %q, %q, %d) = %q, want %q", tc.infrastructure, tc.server, tc.endpoint, tc.port, got, tc.want)
		}
	}
}

// TestCustomRepository checks that a management cluster on the local provider pulls from a
// custom image repository on this host's loopback (its registry is the bootstrap cluster's nodes'
// too), that one off this host is refused as a node reaches none, and that one on vSphere is
// refused, each naming the variable and the way out.
func TestCustomRepository(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    config.Cluster
		custom string
		want   []string
		err    string
	}{
		{"local", config.Cluster{InfrastructureProvider: "local"}, "127.0.0.1:5001/tkg", []string{"127.0.0.1:5001"}, ""},
		{"local off this host", config.Cluster{InfrastructureProvider: "local"}, "registry.example.com/tkg", nil,
			"TKG_CUSTOM_IMAGE_REPOSITORY registry.example.com/tkg: its registry registry.example.com is not on this host's IPv4 loopback, and a real node reaches no registry off this host: serve the copy from a registry here"},
		{"vsphere, its VMs on this host", config.Cluster{InfrastructureProvider: "vsphere", VSphere: &config.VSphere{Server: "198.18.0.1:8989", ControlPlaneEndpoint: "198.18.255.1"}},
			"127.0.0.1:5001/tkg", []string{"127.0.0.1:5001"}, ""},
		{"vsphere, its VMs elsewhere", config.Cluster{InfrastructureProvider: "vsphere", VSphere: &config.VSphere{Server: "vcenter.example.com", ControlPlaneEndpoint: "10.0.0.10"}}, "127.0.0.1:5001/tkg", nil,
			`TKG_CUSTOM_IMAGE_REPOSITORY 127.0.0.1:5001/tkg: VSPHERE_CONTROL_PLANE_ENDPOINT "10.0.0.10" is not in 198.18.255.0/24, so the management cluster's VMs do not boot on this host and cannot reach a copy here, and a bootstrap cluster reaches no registry off this host: unset TKG_CUSTOM_IMAGE_REPOSITORY`},
		{"vsphere, a copy off this host", config.Cluster{InfrastructureProvider: "vsphere", VSphere: &config.VSphere{ControlPlaneEndpoint: "198.18.255.1"}}, "registry.example.com/tkg", nil,
			"its registry registry.example.com is not on this host's IPv4 loopback"},
		{"no custom repository", config.Cluster{InfrastructureProvider: "local"}, "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A dry run does not dial the registry on the bridge.
			f := &flow{cfg: &tc.cfg, o: CreateOptions{DryRun: true}}
			got, err := f.customRegistries(tc.custom)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("got %v, want an error saying %q", err, tc.err)
			case !slices.Equal(got, tc.want):
				t.Errorf("registries %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWaysOutNameOnlyAKeptBootstrapCluster checks that a failed create tells how to resume with,
// or delete, its bootstrap cluster only when that cluster is still in the store: one whose node
// did not boot was deleted by its own create, and one given by the user is not the create's.
func TestWaysOutNameOnlyAKeptBootstrapCluster(t *testing.T) {
	store := localcluster.Store{Root: t.TempDir()}
	f := &flow{o: CreateOptions{Store: store}, bootName: "tkg-kind-abc", bootKubeconfig: "/home/tmp/config_tkg-kind-abc"}
	if f.bootstrapKept() {
		t.Error("a bootstrap cluster missing from the store is named in the ways out")
	}
	dirs, err := store.Dirs(f.bootName)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dirs.Root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := localcluster.WriteSpec(dirs, localcluster.NewSpec(f.bootName, "v1.35.4", 1, 1, 0)); err != nil {
		t.Fatal(err)
	}
	if !f.bootstrapKept() {
		t.Error("a bootstrap cluster in the store is not named in the ways out")
	}
	f.o.UseExistingBootstrap = "/home/.kube/config"
	if f.bootstrapKept() {
		t.Error("the user's own bootstrap cluster is named in the ways out of a failed create")
	}
	msg := (&Error{Step: "bootstrap cluster", Err: os.ErrNotExist}).Error()
	if strings.Contains(msg, "local cluster delete") || strings.Contains(msg, "resume") {
		t.Errorf("the error of a create without a kept bootstrap cluster offers ways out through one:\n%s", msg)
	}
}

// TestCheckReach checks the refusal of a cluster given with -e whose nodes cannot reach what its
// providers need: a local cluster of this host made without that egress is refused with each
// destination it cannot reach and its variable, what it has and how to make one that can; one
// made with it all, a cluster of elsewhere and a provider that needs nothing pass.
func TestCheckReach(t *testing.T) {
	store := storeOfReach(t)
	need := bootstrapDestinations("vsphere", "https://203.0.113.7/sdk", "203.0.113.9", 0)
	flag := "-e (--use-existing-cleanup-cluster)"
	for _, tc := range []struct {
		cluster string
		want    []string
	}{
		{"plain", []string{"-e (--use-existing-cleanup-cluster) /tmp/k: the nodes of local cluster plain cannot reach " +
			"vCenter 203.0.113.7:443 (VSPHERE_SERVER) and the management cluster's endpoint 203.0.113.9:6443 (VSPHERE_CONTROL_PLANE_ENDPOINT)",
			"the destinations it was made with (none)", "--bootstrap --infrastructure-provider vsphere` and VSPHERE_SERVER and VSPHERE_CONTROL_PLANE_ENDPOINT set", "leave out -e"}},
		{"cleanup", []string{"the nodes of local cluster cleanup cannot reach the management cluster's endpoint 203.0.113.9:6443 (VSPHERE_CONTROL_PLANE_ENDPOINT), which",
			"made with (203.0.113.7:443)", "and VSPHERE_CONTROL_PLANE_ENDPOINT set"}},
	} {
		err := checkReach(store, flag, "/tmp/k", localcluster.ContextName(tc.cluster), need)
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("local cluster %s: checkReach = %v, want it to say %q", tc.cluster, err, want)
			}
		}
	}
	for _, tc := range []struct {
		current string
		need    []destination
	}{
		{localcluster.ContextName("full"), need},
		{"kind-elsewhere", need},
		{localcluster.ContextName("gone"), need},
		{localcluster.ContextName("not.a.local.name"), need},
		{localcluster.ContextName("plain"), bootstrapDestinations("local", "", "", 0)},
		// On the bridge, the simulator and its VMs' endpoints are reached without egress.
		{localcluster.ContextName("plain"), bootstrapDestinations("vsphere", "198.18.0.9", "198.18.7.2", 0)},
	} {
		if err := checkReach(store, flag, "/tmp/k", tc.current, tc.need); err != nil {
			t.Errorf("checkReach(%s, %v) = %v, want it to pass", tc.current, tc.need, err)
		}
	}
}

// storeOfReach is a store of three local clusters: plain, made without egress, cleanup, made to
// reach 203.0.113.7:443, and full, made to reach 203.0.113.9:6443 too.
func storeOfReach(t *testing.T) localcluster.Store {
	t.Helper()
	store := localcluster.Store{Root: t.TempDir()}
	for name, egress := range map[string][]string{"plain": nil, "cleanup": {"203.0.113.7:443"}, "full": {"203.0.113.7:443", "203.0.113.9:6443"}} {
		dirs, err := store.Dirs(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dirs.Root, 0o755); err != nil {
			t.Fatal(err)
		}
		spec := localcluster.NewSpec(name, "v1.35.4", 1, 0, 0)
		spec.Egress = egress
		if err := localcluster.WriteSpec(dirs, spec); err != nil {
			t.Fatal(err)
		}
	}
	return store
}
