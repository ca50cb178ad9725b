package managementcluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/internal/config"
)

// TestBootstrapEgress checks what a bootstrap cluster's nodes reach through this host: on
// vSphere the vCenter and the control-plane endpoint, each with its port, unless it is on the
// bridge; on the local provider nothing.
func TestBootstrapEgress(t *testing.T) {
	for _, tc := range []struct {
		infrastructure, server, endpoint string
		want                             []string
	}{
		{"local", "", "", nil},
		{"vsphere", "198.18.0.1:8989", "198.18.255.1", nil},
		{"vsphere", "203.0.113.7:8989", "198.18.255.1", []string{"203.0.113.7:8989"}},
		{"vsphere", "vcenter.example.com", "10.0.0.10", []string{"vcenter.example.com:443", "10.0.0.10:6443"}},
		{"vsphere", "10.0.0.5", "10.0.0.10:6443", []string{"10.0.0.5:443", "10.0.0.10:6443"}},
		{"vsphere", "10.0.0.5", "", []string{"10.0.0.5:443"}},
	} {
		if got := BootstrapEgress(tc.infrastructure, tc.server, tc.endpoint); !slices.Equal(got, tc.want) {
			t.Errorf("BootstrapEgress(%s, %q, %q) = %q, want %q", tc.infrastructure, tc.server, tc.endpoint, got, tc.want)
		}
	}
}

// TestCustomRepositoryOnRealNodes checks that a custom image repository is refused for a
// management cluster whose nodes are real nodes of this host, naming the variable and the way
// out of each provider, and let through otherwise.
func TestCustomRepositoryOnRealNodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    config.Cluster
		custom string
		want   string
	}{
		{"local", config.Cluster{InfrastructureProvider: "local"}, "127.0.0.1:5001/tkg",
			"TKG_CUSTOM_IMAGE_REPOSITORY 127.0.0.1:5001/tkg: a management cluster does not pull from a custom image repository yet (the nodes its provider makes are not told of it): unset TKG_CUSTOM_IMAGE_REPOSITORY"},
		{"vsphere", config.Cluster{InfrastructureProvider: "vsphere", VSphere: &config.VSphere{Server: "198.18.0.1:8989"}}, "127.0.0.1:5001/tkg",
			"unset TKG_CUSTOM_IMAGE_REPOSITORY"},
		{"no custom repository", config.Cluster{InfrastructureProvider: "local"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &flow{cfg: &tc.cfg}
			err := f.checkCustomRepositoryOnRealNodes(tc.custom)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
