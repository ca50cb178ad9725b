package webhooks

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	cniv1alpha1 "github.com/slipway-dev/slipway/api/cni/v1alpha1"
)

func antrea(f func(*cniv1alpha1.AntreaConfigDataValue)) *cniv1alpha1.AntreaConfig {
	c := &cniv1alpha1.AntreaConfig{}
	c.Name = "c"
	f(&c.Spec.Antrea.AntreaConfigDataValue)
	return c
}

func TestAntreaConfigCreate(t *testing.T) {
	v := &AntreaConfig{}
	for _, tc := range []struct {
		name string
		obj  *cniv1alpha1.AntreaConfig
		want string
	}{
		{"defaults", antrea(func(*cniv1alpha1.AntreaConfigDataValue) {}), ""},
		{"noSNAT in noEncap", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.TrafficEncapMode, c.NoSNAT = "noEncap", true }), ""},
		{"noSNAT in encap", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.TrafficEncapMode, c.NoSNAT = "encap", true }), "spec.antrea.config.noSNAT"},
		{"noSNAT in default mode", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.NoSNAT = true }), "trafficEncapMode is encap"},
		{"noSNAT in hybrid", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.TrafficEncapMode, c.NoSNAT = "hybrid", true }), "spec.antrea.config.noSNAT"},
		{"MTU as a number", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.DefaultMTU = ptr.To(intstr.FromInt32(9000)) }), ""},
		{"MTU as a numeric string", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.DefaultMTU = ptr.To(intstr.FromString("1450")) }), ""},
		{"MTU not a number", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.DefaultMTU = ptr.To(intstr.FromString("abc")) }), "spec.antrea.config.defaultMTU"},
		{"MTU negative", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.DefaultMTU = ptr.To(intstr.FromInt32(-5)) }), "from 68 to 65535"},
		{"WireGuard port out of range", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.WireGuard.Port = 70000 }), "spec.antrea.config.wireGuard.port"},
		{"unknown encap mode", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.TrafficEncapMode = "tunnel" }), "spec.antrea.config.trafficEncapMode"},
		{"unknown tunnel type", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.TunnelType = "ipip" }), "spec.antrea.config.tunnelType"},
		{"bad service CIDR", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.ServiceCIDR = "10.96.0.0/33" }), "spec.antrea.config.serviceCIDR"},
		{"bad egress exception", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) {
			c.Egress.EgressExceptCIDRs = []string{"10.0.0.0/8", "nope"}
		}), "spec.antrea.config.egress.exceptCIDRs[1]"},
		{"EndpointSlice with AntreaProxy", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.FeatureGates.EndpointSlice = true }), ""},
		{"EndpointSlice without AntreaProxy", antrea(func(c *cniv1alpha1.AntreaConfigDataValue) {
			c.FeatureGates.EndpointSlice, c.FeatureGates.AntreaProxy = true, ptr.To(false)
		}), "spec.antrea.config.featureGates.EndpointSlice"},
	} {
		_, err := v.ValidateCreate(t.Context(), tc.obj)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: rejected: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: want an error naming %q, got %v", tc.name, tc.want, err)
		}
	}
}

func TestAntreaConfigUpdate(t *testing.T) {
	v := &AntreaConfig{}
	old := antrea(func(c *cniv1alpha1.AntreaConfigDataValue) { c.TrafficEncapMode = "encap" })
	for _, tc := range []struct {
		name string
		f    func(*cniv1alpha1.AntreaConfigDataValue)
		want string
	}{
		{"mutable field", func(c *cniv1alpha1.AntreaConfigDataValue) { c.TransportInterface = "eth1" }, ""},
		{"trafficEncapMode", func(c *cniv1alpha1.AntreaConfigDataValue) { c.TrafficEncapMode = "hybrid" }, "spec.antrea.config.trafficEncapMode: Invalid value: \"hybrid\": field is immutable"},
		{"tlsCipherSuites", func(c *cniv1alpha1.AntreaConfigDataValue) { c.TLSCipherSuites = "x" }, "spec.antrea.config.tlsCipherSuites"},
		{"disableUdpTunnelOffload", func(c *cniv1alpha1.AntreaConfigDataValue) { c.DisableUDPTunnelOffload = true }, "spec.antrea.config.disableUdpTunnelOffload"},
	} {
		updated := old.DeepCopy()
		tc.f(&updated.Spec.Antrea.AntreaConfigDataValue)
		_, err := v.ValidateUpdate(t.Context(), old, updated)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: rejected: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: want an error naming %q, got %v", tc.name, tc.want, err)
		}
	}
}
