package cluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/internal/config"
)

// TestVSphereEgress: a vSphere bootstrap cluster made by `local cluster create` reaches the
// vCenter and the endpoint of the environment, at its API server port, so that it can serve as
// a cleanup or bootstrap cluster given with -e.
func TestVSphereEgress(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want []string
		err  string
	}{
		{nil, []string{"203.0.113.7:443"}, ""},
		{[]string{"VSPHERE_CONTROL_PLANE_ENDPOINT=203.0.113.9"}, []string{"203.0.113.7:443", "203.0.113.9:6443"}, ""},
		{[]string{"VSPHERE_CONTROL_PLANE_ENDPOINT=203.0.113.9", "CLUSTER_API_SERVER_PORT=8443"}, []string{"203.0.113.7:443", "203.0.113.9:8443"}, ""},
		{[]string{"VSPHERE_CONTROL_PLANE_ENDPOINT=203.0.113.9", "CLUSTER_API_SERVER_PORT=http"}, nil, `invalid CLUSTER_API_SERVER_PORT "http": use a port number`},
	} {
		env, err := config.Read("", append([]string{"VSPHERE_SERVER=https://203.0.113.7/sdk", "VSPHERE_USERNAME=u", "VSPHERE_PASSWORD=p"}, tc.env...))
		if err != nil {
			t.Fatal(err)
		}
		vs, err := config.ReadVSphere(env)
		if err != nil {
			t.Fatal(err)
		}
		got, err := vsphereEgress(env, vs)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: vsphereEgress = %v, want an error saying %q", tc.env, err, tc.err)
		case tc.err == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("%v: vsphereEgress = %v, %v; want %v", tc.env, got, err, tc.want)
		}
	}
}
