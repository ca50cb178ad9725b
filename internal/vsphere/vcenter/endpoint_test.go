package vcenter

import (
	"strings"
	"testing"
)

// TestSimulatorEndpoints: the simulator's VMs boot as real nodes, whose endpoints are addresses
// of 198.18.255.0/24 but its network and broadcast ones. Each refusal names the variable and an
// address to choose.
func TestSimulatorEndpoints(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		want     string
	}{
		{"198.18.255.1", ""},
		{"198.18.255.254", ""},
		{"198.18.255.0", "such as 198.18.255.1"},
		{"198.18.255.255", "such as 198.18.255.1"},
		{"198.18.3.1", "in 198.18.255.0/24"},
		{"127.0.100.1", "VSPHERE_CONTROL_PLANE_ENDPOINT 127.0.100.1"},
		{"vc.example.com", "boot as nodes of this host"},
		{"10.0.0.1", "VSPHERE_CONTROL_PLANE_ENDPOINT 10.0.0.1"},
	} {
		err := CheckSimulatorEndpoint(tc.endpoint)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("endpoint %s: %v", tc.endpoint, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("endpoint %s: got %v, want an error saying %q", tc.endpoint, err, tc.want)
		}
	}
}
