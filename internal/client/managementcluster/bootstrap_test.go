package managementcluster

import "testing"

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
