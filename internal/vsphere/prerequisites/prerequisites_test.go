package prerequisites_test

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/internal/test/vcentertest"
	"github.com/slipway-dev/slipway/internal/vsphere/prerequisites"
	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

const ova = "v1.35.4+vmware.1-tkg.1-ubuntu-2004"

var ubuntu = vcenter.OS{Name: "ubuntu", Version: "2004", Arch: "amd64"}

// environment points at s with the inventory's short names, as a user may write them.
func environment(s *simulator.Server) prerequisites.Environment {
	return prerequisites.Environment{
		Server: s.URL.Host, Username: s.Username, Password: s.Password, Thumbprint: s.Thumbprint,
		Datacenter: "dc0", Network: "VM Network", ResourcePool: "rp0", Datastore: "sharedVmfs-0", Folder: "folder0",
		ControlPlaneEndpoint: "198.18.255.10", ManagementCluster: true,
		Release: "v1.35.4+vmware.1-tkg.1", Images: []prerequisites.Image{{OVAVersion: ova, OS: ubuntu}},
	}
}

func TestCheckResolvesTheInventoryWithTKGsLines(t *testing.T) {
	s := vcentertest.Start(t)
	vcentertest.Template(t, s, "ubuntu-2004-kube-v1.35.4", ova)
	var lines []string
	infof := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	r, err := prerequisites.Check(t.Context(), environment(s), infof)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"VSPHERE_DATACENTER": simulator.Datacenter, "VSPHERE_NETWORK": simulator.Network, "VSPHERE_RESOURCE_POOL": simulator.ResourcePool,
		"VSPHERE_DATASTORE": simulator.Datastore, "VSPHERE_FOLDER": simulator.Folder,
	}
	for variable, path := range want {
		if r.Paths[variable] != path {
			t.Errorf("%s resolved to %q, want %q", variable, r.Paths[variable], path)
		}
	}
	out := strings.Join(lines, "\n")
	// seeds/000, in its order.
	for _, line := range []string{
		"vSphere 7.0 Environment Detected.",
		"You have connected to a vSphere 7.0 environment which does not have vSphere with Tanzu enabled.",
		"Deploying TKG management cluster on vSphere 7.0 ...",
		`Setting config variable "VSPHERE_DATACENTER" to value "/dc0"`,
		`Setting config variable "VSPHERE_NETWORK" to value "/dc0/network/VM Network"`,
		`Setting config variable "VSPHERE_RESOURCE_POOL" to value "/dc0/host/cluster0/Resources/rp0"`,
		`Setting config variable "VSPHERE_DATASTORE" to value "/dc0/datastore/sharedVmfs-0"`,
		`Setting config variable "VSPHERE_FOLDER" to value "/dc0/vm/folder0"`,
		"Checking if VSPHERE_CONTROL_PLANE_ENDPOINT 198.18.255.10 is already in use",
	} {
		i := strings.Index(out, line)
		if i < 0 {
			t.Fatalf("missing line %q in:\n%s", line, out)
		}
		out = out[i:]
	}
	if r.Thumbprint != s.Thumbprint {
		t.Errorf("thumbprint %s, want the server's %s", r.Thumbprint, s.Thumbprint)
	}

	// A workload cluster: no vSphere 7 banner.
	lines = nil
	env := environment(s)
	env.ManagementCluster = false
	if _, err := prerequisites.Check(t.Context(), env, infof); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(lines, "\n"), "vSphere 7.0 Environment Detected") {
		t.Errorf("a workload cluster's check described vSphere 7:\n%s", strings.Join(lines, "\n"))
	}
}

func TestCheckRefusesWhatIsWrongNamingTheVariable(t *testing.T) {
	s := vcentertest.Start(t)
	vcentertest.Template(t, s, "ubuntu-2004-kube-v1.35.4", ova)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := closed.Addr().String()
	_ = closed.Close()

	for _, tc := range []struct {
		name   string
		change func(*prerequisites.Environment)
		want   []string
	}{
		{"unreachable server", func(e *prerequisites.Environment) { e.Server = unreachable },
			[]string{"cannot reach vSphere " + unreachable + " (VSPHERE_SERVER)", "check VSPHERE_SERVER"}},
		{"wrong password", func(e *prerequisites.Environment) { e.Password = "wrong" },
			[]string{"unable to verify vSphere credentials", "check VSPHERE_USERNAME and VSPHERE_PASSWORD"}},
		{"thumbprint mismatch", func(e *prerequisites.Environment) { e.Thumbprint = "AA:BB:CC" },
			[]string{"the VSPHERE_TLS_THUMBPRINT variable does not match the thumbprint of vSphere", "the actual thumbprint is " + s.Thumbprint}},
		{"thumbprint unset", func(e *prerequisites.Environment) { e.Thumbprint = "" },
			[]string{"VSPHERE_TLS_THUMBPRINT is not set", "has the thumbprint " + s.Thumbprint, "or set VSPHERE_INSECURE to true"}},
		{"missing datacenter", func(e *prerequisites.Environment) { e.Datacenter = "dc9" },
			[]string{`invalid VSPHERE_DATACENTER "dc9": it is not found in vCenter`, "use one of /dc0"}},
		{"missing network", func(e *prerequisites.Environment) { e.Network = "Prod Network" },
			[]string{`invalid VSPHERE_NETWORK "Prod Network": it is not found in datacenter /dc0`, "use one of /dc0/network/VM Network"}},
		{"missing resource pool", func(e *prerequisites.Environment) { e.ResourcePool = "rp9" },
			[]string{`invalid VSPHERE_RESOURCE_POOL "rp9"`, "/dc0/host/cluster0/Resources/rp0"}},
		{"missing datastore", func(e *prerequisites.Environment) { e.Datastore = "/dc0/datastore/ds9" },
			[]string{`invalid VSPHERE_DATASTORE "/dc0/datastore/ds9"`, "use one of /dc0/datastore/sharedVmfs-0"}},
		{"missing folder", func(e *prerequisites.Environment) { e.Folder = "folder9" },
			[]string{`invalid VSPHERE_FOLDER "folder9"`, "/dc0/vm/folder0"}},
		{"endpoint in use by a workload cluster", func(e *prerequisites.Environment) {
			e.ManagementCluster = false
			e.UsedEndpoints = map[string]string{"198.18.255.10": "cluster 'wc1'"}
		}, []string{"control plane endpoint '198.18.255.10' already in use by cluster 'wc1' and cannot be reused", "set VSPHERE_CONTROL_PLANE_ENDPOINT"}},
		{"endpoint off the bridge's block on the simulator", func(e *prerequisites.Environment) { e.ControlPlaneEndpoint = "10.180.130.162" },
			[]string{"VSPHERE_CONTROL_PLANE_ENDPOINT 10.180.130.162: the simulator's VMs boot as nodes of this host", "set VSPHERE_CONTROL_PLANE_ENDPOINT to an unused address of it such as 198.18.255.1"}},
		{"endpoint on loopback on the simulator", func(e *prerequisites.Environment) { e.ControlPlaneEndpoint = "127.0.100.1" },
			[]string{"VSPHERE_CONTROL_PLANE_ENDPOINT 127.0.100.1: the simulator's VMs boot as nodes of this host", "in 198.18.255.0/24"}},
		{"no template of the release", func(e *prerequisites.Environment) {
			e.Release = "v1.34.3+vmware.1-tkg.1"
			e.Images = []prerequisites.Image{{OVAVersion: "v1.34.3+vmware.1-tkg.1-ubuntu-2004", OS: ubuntu}}
		}, []string{"unable to find VM Template associated with TanzuKubernetesRelease v1.34.3+vmware.1-tkg.1",
			"[v1.34.3+vmware.1-tkg.1-ubuntu-2004]", "import its node OVA into /dc0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := environment(s)
			tc.change(&env)
			_, err := prerequisites.Check(t.Context(), env, func(string, ...any) {})
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}

	t.Run("endpoint in use when creating a management cluster", func(t *testing.T) {
		env := environment(s)
		env.UsedEndpoints = map[string]string{"198.18.255.10": "cluster 'wc1'"}
		var lines []string
		if _, err := prerequisites.Check(t.Context(), env, func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(lines, "\n"), "WARNING: The control plane endpoint '198.18.255.10' might already used by other cluster") {
			t.Errorf("no warning in:\n%s", strings.Join(lines, "\n"))
		}
	})

	t.Run("an accepted thumbprint, where TKG prompts", func(t *testing.T) {
		for _, configured := range []string{"", "AA:BB:CC"} {
			env := environment(s)
			env.Thumbprint = configured
			var asked []string
			env.AcceptThumbprint = func(host, thumbprint, was string) bool {
				asked = append(asked, host+" "+thumbprint+" "+was)
				return true
			}
			r, err := prerequisites.Check(t.Context(), env, func(string, ...any) {})
			if err != nil {
				t.Fatalf("configured %q: %v", configured, err)
			}
			if want := []string{s.URL.Host + " " + s.Thumbprint + " " + configured}; strings.Join(asked, ";") != strings.Join(want, ";") || r.Thumbprint != s.Thumbprint {
				t.Errorf("configured %q: asked %q, resolved %s", configured, asked, r.Thumbprint)
			}
		}
		// The right thumbprint asks nothing; a refusal keeps the error.
		env := environment(s)
		env.AcceptThumbprint = func(string, string, string) bool { t.Error("asked about a matching thumbprint"); return true }
		if _, err := prerequisites.Check(t.Context(), env, func(string, ...any) {}); err != nil {
			t.Fatal(err)
		}
		env.Thumbprint = ""
		env.AcceptThumbprint = func(string, string, string) bool { return false }
		if _, err := prerequisites.Check(t.Context(), env, func(string, ...any) {}); err == nil || !strings.Contains(err.Error(), "has the thumbprint "+s.Thumbprint) {
			t.Errorf("refused: %v", err)
		}
	})

	t.Run("insecure skips the thumbprint", func(t *testing.T) {
		env := environment(s)
		env.Thumbprint, env.Insecure = "AA:BB", true
		if _, err := prerequisites.Check(t.Context(), env, func(string, ...any) {}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCheckRefusesAnOldVSphere(t *testing.T) {
	saved := simulator.Version
	simulator.Version.Version, simulator.Version.FullName = "6.5.0", "VMware vCenter Server 6.5.0 build-7515524"
	s := vcentertest.Start(t)
	simulator.Version = saved
	_, err := prerequisites.Check(t.Context(), environment(s), func(string, ...any) {})
	if err == nil || !strings.Contains(err.Error(), "the minimum vSphere version supported by Tanzu Kubernetes Grid is vSphere 6.7u3, please upgrade vSphere and try again") {
		t.Fatalf("got %v", err)
	}
}

// A vCenter with vSphere with Tanzu enabled on a cluster gets TKG's other vSphere 7 paragraph.
func TestCheckDetectsVSphereWithTanzu(t *testing.T) {
	s, err := simulator.Start(t.Context(), simulator.Options{Address: vcentertest.FreeAddress(t), Dir: t.TempDir(),
		Username: simulator.DefaultUsername, Password: vcentertest.Password, WithTanzu: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	vcentertest.Template(t, s, "ubuntu-2004-kube-v1.35.4", ova)
	var lines []string
	if _, err := prerequisites.Check(t.Context(), environment(s), func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(lines, "\n")
	for _, want := range []string{"vSphere 7.0 with Tanzu Detected.",
		"You have connected to a vSphere 7.0 with Tanzu environment that includes an integrated Tanzu Kubernetes Grid Service which",
		"Deploying TKG management cluster on vSphere 7.0 ..."} {
		if !strings.Contains(out, want) {
			t.Errorf("missing line %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "does not have vSphere with Tanzu enabled") {
		t.Errorf("vSphere with Tanzu enabled was described as not enabled:\n%s", out)
	}
}
