package vcenter

import (
	"strings"
	"testing"
)

// TestSimulatorEndpoints: a simulator on the bridge's host address boots real nodes, whose
// endpoints are addresses of 198.18.255.0/24 but its network and broadcast ones; one on loopback
// boots the node agent's, whose endpoints are loopback addresses. Each refusal names the variable
// and an address to choose.
func TestSimulatorEndpoints(t *testing.T) {
	if !SimulatorRealNodes("198.18.0.1:8989") || SimulatorRealNodes("127.0.0.1:8989") || SimulatorRealNodes("198.18.0.1") {
		t.Error("SimulatorRealNodes: want true for 198.18.0.1:PORT only")
	}
	for _, tc := range []struct {
		real     bool
		endpoint string
		want     string
	}{
		{true, "198.18.255.1", ""},
		{true, "198.18.255.254", ""},
		{true, "198.18.255.0", "such as 198.18.255.1"},
		{true, "198.18.255.255", "such as 198.18.255.1"},
		{true, "198.18.3.1", "in 198.18.255.0/24"},
		{true, "127.0.100.1", "VSPHERE_CONTROL_PLANE_ENDPOINT 127.0.100.1"},
		{true, "vc.example.com", "boot as real nodes"},
		{false, "127.0.100.1", ""},
		{false, "198.18.255.1", "such as 127.0.100.1"},
		{false, "10.0.0.1", "VSPHERE_CONTROL_PLANE_ENDPOINT 10.0.0.1"},
	} {
		err := CheckSimulatorEndpoint(tc.real, tc.endpoint)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("real nodes %v, endpoint %s: %v", tc.real, tc.endpoint, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("real nodes %v, endpoint %s: got %v, want an error saying %q", tc.real, tc.endpoint, err, tc.want)
		}
	}
}
