package cluster

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/local/vm"
)

func TestHostRegistry(t *testing.T) {
	for _, tc := range []struct {
		repository, want, err string
	}{
		{"", "", ""},
		{"127.0.0.1:5001/tkg", "127.0.0.1:5001", ""},
		{"localhost:5001/tkg/copy", "localhost:5001", ""},
		{"127.1.2.3:443", "127.1.2.3:443", ""},
		// A registry elsewhere is not one a node reaches; one here needs its port named.
		{"registry.example.com/tkg", "", "its registry registry.example.com is not on this host's IPv4 loopback"},
		{"10.0.0.5:5000/tkg", "", "its registry 10.0.0.5:5000 is not on this host's IPv4 loopback"},
		{"[::1]:5000/tkg", "", "its registry [::1]:5000 is not on this host's IPv4 loopback"},
		{"localhost/tkg", "", "name the port of the registry on this host's loopback (localhost:PORT)"},
	} {
		got, err := HostRegistry("TKG_CUSTOM_IMAGE_REPOSITORY", tc.repository)
		if got != tc.want {
			t.Errorf("HostRegistry(%q) = %q, want %q", tc.repository, got, tc.want)
		}
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("HostRegistry(%q): %v", tc.repository, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "TKG_CUSTOM_IMAGE_REPOSITORY "+tc.repository)):
			t.Errorf("HostRegistry(%q): %v, want an error naming the variable and %q", tc.repository, err, tc.err)
		}
	}
}

func TestRegistryMirrorsServeHostRegistriesOnTheBridge(t *testing.T) {
	got := registryMirrors("127.0.0.1:5000", []string{"127.0.0.1:5001", "localhost:6000"})
	want := map[string]string{
		"127.0.0.1:5000":               "http://198.18.0.1:5000",
		"localhost:5000":               "http://198.18.0.1:5000",
		"projects.registry.vmware.com": "http://198.18.0.1:5000",
		"127.0.0.1:5001":               "http://198.18.0.1:5001",
		"localhost:6000":               "http://198.18.0.1:6000",
	}
	for host, url := range want {
		if got[host] != url {
			t.Errorf("mirror of %s = %q, want %q", host, got[host], url)
		}
	}
}

// TestResolveEgress checks the destinations a node may be given: addresses and ports off this
// host's loopback and bridge, each refusal naming the destination; localhost, a name, resolves
// to loopback and is refused too.
func TestResolveEgress(t *testing.T) {
	got, names, err := ResolveEgress([]string{"203.0.113.7:443", "10.0.0.10:6443", "203.0.113.7:443"})
	if err != nil || len(got) != 2 || got[0].String() != "203.0.113.7:443" || got[1].String() != "10.0.0.10:6443" || names != nil {
		t.Errorf("ResolveEgress = %v, %v, %v", got, names, err)
	}
	for d, want := range map[string]string{
		"203.0.113.7":     "is not HOST:PORT",
		"203.0.113.7:0":   "is not a port number",
		"127.0.0.1:8989":  "this host's loopback",
		"0.0.0.0:443":     "names no host",
		"198.18.0.1:8989": "on the bridge",
		"[fd00::1]:443":   "not IPv4",
		"localhost:8989":  `this host's loopback, which a pod cannot reach: serve it on another address of this host (from "localhost:8989")`,
	} {
		if _, _, err := ResolveEgress([]string{d}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ResolveEgress(%s) = %v, want an error saying %q", d, err, want)
		}
	}
}

// TestUnreached checks what a cluster's nodes cannot reach: a destination off the bridge that is
// not among its egress, and not one that is; an ill-formed destination is an error.
func TestUnreached(t *testing.T) {
	spec := &Spec{Name: "cleanup", Egress: []string{"203.0.113.7:443"}}
	got, err := spec.Unreached([]string{"203.0.113.7:443", "203.0.113.8:443", "203.0.113.7:8443"})
	if err != nil || !slices.Equal(got, []string{"203.0.113.8:443", "203.0.113.7:8443"}) {
		t.Errorf("Unreached = %v, %v; want the two destinations not in its egress", got, err)
	}
	if got, err := (&Spec{Name: "plain"}).Unreached([]string{"203.0.113.7:443"}); err != nil || !slices.Equal(got, []string{"203.0.113.7:443"}) {
		t.Errorf("a cluster without egress: Unreached = %v, %v", got, err)
	}
	if _, err := spec.Unreached([]string{"203.0.113.7"}); err == nil || !strings.Contains(err.Error(), "is not HOST:PORT") {
		t.Errorf("an ill-formed destination: Unreached = %v", err)
	}

	// Names: the nodes answer only the names they were made with.
	hosts := map[string][]netip.Addr{
		"vc.example":     {netip.MustParseAddr("203.0.113.7")},
		"vcsim.example":  {netip.MustParseAddr("198.18.0.9")},
		"multi.example":  {netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("203.0.113.8")},
		"single.example": {netip.MustParseAddr("203.0.113.8")},
	}
	lookup := lookupIPv4
	t.Cleanup(func() { lookupIPv4 = lookup })
	lookupIPv4 = func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := hosts[strings.ToLower(strings.TrimSuffix(host, "."))]; ok {
			return a, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	named := &Spec{Name: "named", Egress: []string{"vc.example:443", "vcsim.example:443", "single.example:443"}}
	for _, tc := range []struct {
		spec        *Spec
		destination string
		reached     bool
	}{
		{named, "vc.example:443", true},
		{named, "VC.example.:443", true},
		// The name's address is in the egress, but the nodes cannot resolve a name they lack.
		{spec, "vc.example:443", false},
		// A name on the bridge is no egress address, yet the nodes must answer it.
		{named, "vcsim.example:443", true},
		{spec, "vcsim.example:443", false},
		// Every address of a name of several.
		{&Spec{Name: "multi", Egress: []string{"multi.example:443", "single.example:443"}}, "multi.example:443", true},
		{&Spec{Name: "multi", Egress: []string{"multi.example:443"}}, "multi.example:8443", false},
		// An address reached by a name in the egress.
		{named, "203.0.113.7:443", true},
	} {
		got, err := tc.spec.Unreached([]string{tc.destination})
		if err != nil || (len(got) == 0) != tc.reached {
			t.Errorf("%s (egress %v): Unreached(%s) = %v, %v; reached: want %v", tc.spec.Name, tc.spec.Egress, tc.destination, got, err, tc.reached)
		}
	}
}

// A node that failed to boot is deleted with its logs by the create that fails, so its error
// must carry the log's last lines, not only their path.
func TestBootFailureCarriesTheLogsLastLines(t *testing.T) {
	dirs := Dirs{Root: t.TempDir()}
	node := NodeSpec{Name: "c1-control-plane"}
	dir := dirs.Node(node.Name)
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&log, "line %d\n", i)
	}
	log.WriteString("error execution phase preflight: [preflight] Some fatal errors occurred\n")
	if err := os.WriteFile(vm.LogPath(dir, "cloud-init-output.log"), []byte(log.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cloud-init.done"), []byte("failed: kubeadm init: exit status 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := waitForBoot(t.Context(), dirs, []NodeSpec{node}, 5*time.Second)
	if err == nil {
		t.Fatal("a failed boot was taken for a booted node")
	}
	msg := err.Error()
	for _, want := range []string{"node c1-control-plane did not boot: cloud-init failed: kubeadm init: exit status 1", "    line 30\n", "    error execution phase preflight"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "line 11\n") || !strings.Contains(msg, "line 12\n") {
		t.Errorf("error should carry the last %d lines of the log, no more:\n%s", bootLogLines, msg)
	}
	if strings.HasSuffix(msg, "\n") {
		t.Errorf("error ends with a new line: %q", msg)
	}
}
