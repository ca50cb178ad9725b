package managementcluster

import (
	"strings"
	"testing"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	"github.com/slipway-dev/slipway/internal/config"
)

// TestRealBootstrap checks which bootstrap clusters are of real nodes: on the local provider
// those of a management cluster of real nodes, on vSphere those whose vCenter is on the bridge.
func TestRealBootstrap(t *testing.T) {
	for _, tc := range []struct {
		infrastructure string
		realNodes      bool
		server         string
		want           bool
	}{
		{"local", true, "", true},
		{"local", false, "", false},
		{"vsphere", false, "198.18.0.1:8989", true},
		{"vsphere", true, "127.0.0.1:8989", false},
		{"vsphere", true, "vcenter.example.com", false},
	} {
		if got := RealBootstrap(tc.infrastructure, tc.realNodes, tc.server); got != tc.want {
			t.Errorf("RealBootstrap(%s, %v, %q) = %v, want %v", tc.infrastructure, tc.realNodes, tc.server, got, tc.want)
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
		{"local real nodes", config.Cluster{InfrastructureProvider: "local", NodeRuntime: infrav1.NodeRuntimeReal}, "127.0.0.1:5001/tkg",
			"TKG_CUSTOM_IMAGE_REPOSITORY 127.0.0.1:5001/tkg: a management cluster of real nodes does not pull from a custom image repository yet (the nodes its provider makes are not told of it): unset TKG_CUSTOM_IMAGE_REPOSITORY, or set LOCAL_NODE_RUNTIME: agent"},
		{"simulator on the bridge", config.Cluster{InfrastructureProvider: "vsphere", VSphere: &config.VSphere{Server: "198.18.0.1:8989"}}, "127.0.0.1:5001/tkg",
			"or serve the simulator on loopback, where its VMs boot as the node agent's"},
		{"no custom repository", config.Cluster{InfrastructureProvider: "local", NodeRuntime: infrav1.NodeRuntimeReal}, "", ""},
		{"the node agent's nodes", config.Cluster{InfrastructureProvider: "local", NodeRuntime: "agent"}, "127.0.0.1:5001/tkg", ""},
		{"a vCenter elsewhere", config.Cluster{InfrastructureProvider: "vsphere", VSphere: &config.VSphere{Server: "vcenter.example.com"}}, "registry.example.com/tkg", ""},
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
