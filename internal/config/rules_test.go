package config

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// sshKey is a real public key, as VSPHERE_SSH_AUTHORIZED_KEY takes it.
const sshKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfcGigZ63XnMoqRl2PKwyhzQ6ChfGxQJhqvD/5SujkZ capv@example"

// baseLocal and baseVSphere are complete configurations that the rules' cases change.
var (
	baseLocal   = map[string]string{ClusterName: "wc"}
	baseVSphere = map[string]string{
		ClusterName: "vc1", InfrastructureProvider: "vsphere", VSphereServer: "vcenter.example.com",
		VSphereUsername: "administrator@vsphere.local", VSpherePassword: "Admin!23", VSphereDatacenter: "/dc0",
		VSphereDatastore: "/dc0/datastore/ds0", VSphereNetwork: "/dc0/network/VM Network",
		VSphereResourcePool: "/dc0/host/cluster0/Resources", VSphereFolder: "/dc0/vm/tkg",
		VSphereSSHAuthorizedKey: sshKey, VSphereControlPlaneEndpoint: "10.0.0.10",
	}
)

// flat writes base changed by name, value pairs as a flat file; the value "-" drops the variable.
func flat(base map[string]string, pairs ...string) string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "-" {
			delete(m, pairs[i])
		} else {
			m[pairs[i]] = pairs[i+1]
		}
	}
	data, err := yaml.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(data)
}

func local(pairs ...string) string   { return flat(baseLocal, pairs...) }
func vsphere(pairs ...string) string { return flat(baseVSphere, pairs...) }

func complete(t *testing.T, file string, role Role) (*Cluster, error) {
	t.Helper()
	return Complete(mustRead(t, file, nil), role, defaults, func(string, ...any) {})
}

// TestRulesRefuse checks every rule refuses what it should, with a message that names the
// variable, its value and what is accepted.
func TestRulesRefuse(t *testing.T) {
	for _, tc := range []struct {
		name, file      string
		role            Role
		variable, value string // named by the message (value empty when the variable is missing)
		want            string
	}{
		{"worker count", local(WorkerMachineCount, "-1"), Workload, WorkerMachineCount, "-1", "use a whole number of at least 0"},
		{"prod workers", local(ClusterPlan, "prod", WorkerMachineCount, "2"), Workload, WorkerMachineCount, "2",
			"prod plan requires at least 3 workers, one for each of its machine deployments md-0, md-1 and md-2"},
		{"prod workers per deployment", local(ClusterPlan, "prod", WorkerMachineCount0, "1", WorkerMachineCount1, "0", WorkerMachineCount2, "1"), Workload,
			WorkerMachineCount1, "2", "prod plan requires at least 3 workers"},
		{"worker count per deployment", local(ClusterPlan, "prod", WorkerMachineCount0, "1", WorkerMachineCount1, "x", WorkerMachineCount2, "1"), Workload,
			WorkerMachineCount1, "x", "use a whole number of at least 0"},
		{"dev worker count of md-0", local(WorkerMachineCount0, "many"), Workload, WorkerMachineCount0, "many", "use a whole number of at least 0"},

		{"MHC switch", local(EnableMHC, "yes"), Workload, EnableMHC, "yes", "use true or false"},
		{"MHC control plane switch", local(EnableMHCControlPlane, "on"), Workload, EnableMHCControlPlane, "on", "use true or false"},
		{"MHC unknown timeout", local(MHCUnknownStatusTimeout, "5 minutes"), Workload, MHCUnknownStatusTimeout, "5 minutes", "use a duration of whole seconds, as 5m"},
		{"MHC false timeout", local(MHCFalseStatusTimeout, "-1m"), Workload, MHCFalseStatusTimeout, "-1m", "use a duration of whole seconds"},
		{"node startup timeout", local(NodeStartupTimeout, "10s"), Workload, NodeStartupTimeout, "10s", "use 0 (no limit) or a duration of whole seconds of at least 30s"},
		{"MHC max unhealthy", local(MHCMaxUnhealthyWorkerNode, "lots"), Workload, MHCMaxUnhealthyWorkerNode, "lots", "use a number of machines or a percentage of them, as 2 or 40%"},
		{"MHC max unhealthy percent", local(MHCMaxUnhealthyControlPlane, "120%"), Workload, MHCMaxUnhealthyControlPlane, "120%", "as 2 or 40%"},

		{"proxy not enabled", local(HTTPProxy, "http://proxy.example.com:3128"), Workload, HTTPProxyEnabled, "",
			"TKG_HTTP_PROXY is set but TKG_HTTP_PROXY_ENABLED is not: set TKG_HTTP_PROXY_ENABLED to true to use the proxy, or to false to ignore it"},
		{"proxy switch", local(HTTPProxyEnabled, "maybe"), Workload, HTTPProxyEnabled, "maybe", "use true or false"},
		{"HTTPS proxy missing", local(HTTPProxyEnabled, "true", HTTPProxy, "http://proxy.example.com:3128"), Workload, HTTPSProxy, "",
			"TKG_HTTPS_PROXY is not set but TKG_HTTP_PROXY_ENABLED is true: use the proxy's URL"},
		{"proxy without scheme", local(HTTPProxyEnabled, "true", HTTPProxy, "proxy.example.com", HTTPSProxy, "http://proxy.example.com:3128"), Workload,
			HTTPProxy, "proxy.example.com", "scheme is missing from the proxy URL: use the proxy's URL, as http://proxy.example.com:3128"},
		{"proxy without host", local(HTTPProxyEnabled, "true", HTTPProxy, "http://proxy.example.com:3128", HTTPSProxy, "http:///path"), Workload,
			HTTPSProxy, "http:///path", "hostname is missing from the proxy URL"},
		{"proxy of the other IP family", local(HTTPProxyEnabled, "true", HTTPProxy, "http://[fd00::1]:3128", HTTPSProxy, "http://proxy.example.com:3128"), Workload,
			HTTPProxy, "http://[fd00::1]:3128", `expected to be an address of type "ipv4" (TKG_IP_FAMILY)`},
		{"no proxy wildcard", local(HTTPProxyEnabled, "true", HTTPProxy, "http://p:3128", HTTPSProxy, "http://p:3128", NoProxy, "*"), Workload,
			NoProxy, "*", "invalid string '*' in TKG_NO_PROXY: list hosts, domains and CIDRs"},

		{"control-plane labels format", local(ControlPlaneNodeLabels, "tier"), Workload, ControlPlaneNodeLabels, "tier", `"tier" is not key=value: use key=value pairs separated by commas`},
		{"control-plane label key", local(ControlPlaneNodeLabels, "bad key=x"), Workload, ControlPlaneNodeLabels, "bad key=x", `label key "bad key"`},
		{"control-plane label value", local(ControlPlaneNodeLabels, "tier=a b"), Workload, ControlPlaneNodeLabels, "tier=a b", `label value "a b"`},
		{"control-plane label twice", local(ControlPlaneNodeLabels, "a=1,a=2"), Workload, ControlPlaneNodeLabels, "a=1,a=2", `label key "a" is given twice`},
		{"IPv6 service CIDR", local(IPFamily, "ipv6", ClusterCIDR, "fd00:100:96::/48", ServiceCIDR, "fd00:100:64::/64"), Workload,
			ServiceCIDR, "fd00:100:64::/64", `expected netmask to be "/108" or greater`},

		{"vSphere required", vsphere(VSphereFolder, "-", VSphereSSHAuthorizedKey, "-"), Workload, VSphereFolder, "",
			"missing configuration variables for the vsphere infrastructure provider: VSPHERE_FOLDER, VSPHERE_SSH_AUTHORIZED_KEY"},
		{"vSphere endpoint", vsphere(VSphereControlPlaneEndpoint, "-"), Management, VSphereControlPlaneEndpoint, "",
			"'VSPHERE_CONTROL_PLANE_ENDPOINT' config variable is required for infrastructure provider vsphere"},
		{"vSphere endpoint is the server", vsphere(VSphereServer, "10.0.0.10"), Workload, VSphereControlPlaneEndpoint, "10.0.0.10",
			"the vSphere Control Plane Endpoint should not match the vSphere Server address (VSPHERE_SERVER)"},
		{"vSphere endpoint form", vsphere(VSphereControlPlaneEndpoint, "not a host!"), Workload, VSphereControlPlaneEndpoint, "not a host!", "use an IP address or a host name"},
		{"vSphere storage", vsphere(VSphereDatastore, "-"), Workload, VSphereDatastore, "",
			"Neither VSPHERE_DATASTORE or VSPHERE_STORAGE_POLICY_ID are set. At least one of them needs to be set"},
		{"vSphere clone mode", vsphere(VSphereCloneMode, "copy"), Workload, VSphereCloneMode, "copy", "use fullClone or linkedClone"},
		{"vSphere insecure", vsphere(VSphereInsecure, "nope"), Workload, VSphereInsecure, "nope", "use true or false"},
		// What a provider does not use is still refused when ill-formed.
		{"size on local", local(Size, "gigantic"), Management, Size, "gigantic", "node size gigantic is not defined"},
		{"control-plane size on local", local(ControlPlaneSize, "tiny-ish"), Workload, ControlPlaneSize, "tiny-ish", "node size tiny-ish is not defined"},
		{"OS on local", local(OSName, "windows95"), Workload, OSName, "windows95", "use ubuntu or photon"},
		{"API server port on local", local(ClusterAPIServerPort, "70000"), Workload, ClusterAPIServerPort, "70000", "use a port number from 1 to 65535"},
		{"insecure on local", local(VSphereInsecure, "maybe"), Workload, VSphereInsecure, "maybe", "use true or false"},
		{"deploy on vSphere 7", vsphere(DeployTKGOnVSphere7, "sure"), Management, DeployTKGOnVSphere7, "sure", "use true or false"},
		{"vSphere password encoding", vsphere(VSpherePassword, "<encoded:!!!>"), Workload, VSpherePassword, "<encoded:…>",
			"the text between \"<encoded:\" and '>' is not base64"},
		{"vSphere SSH key", vsphere(VSphereSSHAuthorizedKey, "ssh-rsa not-a-key"), Workload, VSphereSSHAuthorizedKey, "ssh-rsa not-a-key",
			"use a public key in authorized_keys form"},
		{"vSphere server through the proxy", vsphere(HTTPProxyEnabled, "true", HTTPProxy, "http://p:3128", HTTPSProxy, "http://p:3128"), Workload,
			VSphereServer, "vcenter.example.com", "is not in TKG_NO_PROXY: slipway cannot reach vCenter through the proxy with its certificate verified: add it to TKG_NO_PROXY, or set VSPHERE_INSECURE to true"},
		{"size name", vsphere(Size, "huge"), Workload, Size, "huge", "node size huge is not defined, use one of small, medium, large, extra-large"},
		{"worker size name", vsphere(WorkerSize, "xl"), Workload, WorkerSize, "xl", "use one of small, medium, large, extra-large"},
		{"control-plane memory", vsphere(VSphereControlPlaneMemMiB, "2048"), Workload, VSphereControlPlaneMemMiB, "2048",
			"the minimum requirement of VSPHERE_CONTROL_PLANE_MEM_MIB is 4096"},
		{"worker CPUs", vsphere(VSphereWorkerNumCPUs, "two"), Workload, VSphereWorkerNumCPUs, "two", "use a whole number of at least 2"},
		{"every node's disk", vsphere(VSphereDiskGiB, "10"), Workload, VSphereDiskGiB, "10",
			"(for VSPHERE_WORKER_DISK_GIB) \"10\": the minimum requirement of VSPHERE_WORKER_DISK_GIB is 20"},
		{"OS name", vsphere(OSName, "centos"), Workload, OSName, "centos", "use ubuntu or photon"},
		{"identity type", local(IdentityManagementType, "saml"), Management, IdentityManagementType, "saml", "use none, oidc or ldap"},
		{"OIDC issuer", local(IdentityManagementType, "oidc", OIDCClientID, "id", OIDCClientSecret, "s"), Management, OIDCIssuerURL, "",
			"OIDC_IDENTITY_PROVIDER_ISSUER_URL is not set but IDENTITY_MANAGEMENT_TYPE is oidc: set it, or set IDENTITY_MANAGEMENT_TYPE to none"},
		{"OIDC issuer scheme", local(IdentityManagementType, "oidc", OIDCIssuerURL, "http://login.example.com", OIDCClientID, "id", OIDCClientSecret, "s"), Management,
			OIDCIssuerURL, "http://login.example.com", "use the provider's https URL"},
		{"OIDC client secret", local(IdentityManagementType, "oidc", OIDCIssuerURL, "https://login.example.com", OIDCClientID, "id"), Management,
			OIDCClientSecret, "", "is not set but IDENTITY_MANAGEMENT_TYPE is oidc"},
		{"LDAP host", local(IdentityManagementType, "ldap", LDAPHost, "ldaps://ldap.example.com"), Management, LDAPHost, "ldaps://ldap.example.com",
			"use the directory's host[:port], as ldaps.example.com:636, without a scheme"},
		{"LDAP root CA", local(IdentityManagementType, "ldap", LDAPHost, "ldap.example.com:636", LDAPRootCAData, "not base64!"), Management,
			LDAPRootCAData, "", "it is not base64"},
		{"OS version", vsphere(OSVersion, "22.04"), Workload, OSVersion, "22.04", "for OS_NAME ubuntu: use 20.04"},
		{"OS arch", vsphere(OSArch, "arm64"), Workload, OSArch, "arm64", "use amd64"},
		{"API server port", vsphere(ClusterAPIServerPort, "70000"), Workload, ClusterAPIServerPort, "70000", "use a port number from 1 to 65535"},
		{"API server port number", vsphere(ClusterAPIServerPort, "https"), Workload, ClusterAPIServerPort, "https", "use a port number from 1 to 65535"},
		{"IP family", local(IPFamily, "ipv5"), Workload, IPFamily, "ipv5", "use ipv4, ipv6, ipv4,ipv6, ipv6,ipv4"},
		{"dual stack with one CIDR", local(IPFamily, "ipv4,ipv6"), Workload, ClusterCIDR, "100.96.0.0/11", `expected to be a CIDR of type "ipv4,ipv6"`},
		{"dual stack in the wrong order", local(IPFamily, "ipv6,ipv4", ClusterCIDR, "100.96.0.0/11,fd00:100:96::/48", ServiceCIDR, "fd00:100:64::/108,100.64.0.0/13"), Workload,
			ClusterCIDR, "100.96.0.0/11,fd00:100:96::/48", `expected to be a CIDR of type "ipv6,ipv4"`},
		{"NTP servers", vsphere(NTPServers, "time.example.com,not a host"), Workload, NTPServers, "not a host", "is neither an IP address nor a host name"},
		{"name servers", vsphere(ControlPlaneNodeNameservers, "dns.example.com"), Workload, ControlPlaneNodeNameservers, "dns.example.com", "is not an IP address"},
		{"IP pool", vsphere(NodeIPAMIPPoolName, "Node_Pool"), Workload, NodeIPAMIPPoolName, "Node_Pool", "name an InClusterIPPool of the cluster's namespace"},
		{"audit logging", local(EnableAuditLogging, "yes"), Workload, EnableAuditLogging, "yes", "use true or false"},
		{"CA not base64", local(CustomImageRepositoryCACertificate, "not base64!"), Workload, CustomImageRepositoryCACertificate, "", "it is not base64"},
		{"CA not PEM", local(ProxyCACert, "aGVsbG8="), Workload, ProxyCACert, "", "decodes to no PEM certificate"},
		{"skip TLS verify without a repository", vsphere(CustomImageRepositorySkipTLSVerify, "true"), Workload, CustomImageRepositorySkipTLSVerify, "",
			"it applies to the custom image repository only"},
		{"system-wide proxy without a proxy", vsphere(NodeSystemWideProxy, "true"), Workload, NodeSystemWideProxy, "", "no proxy is used"},
		{"autoscaler", local(EnableAutoscaler, "true"), Workload, EnableAutoscaler, "", "slipway does not deploy the cluster autoscaler yet"},
		{"autoscaler sizes", local(autoscalerSizes[0], "3", autoscalerSizes[1], "1"), Workload, "AUTOSCALER_MIN_SIZE_0", "3", "the minimum is above the maximum"},
		{"autoscaler durations", local(AutoscalerScaleDownUnneededTime, "soon"), Workload, AutoscalerScaleDownUnneededTime, "soon", "use a duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := complete(t, tc.file, tc.role)
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", tc.want)
			}
			for _, want := range []string{tc.want, tc.variable, tc.value} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("got %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

// TestRulesAccept checks what each rule accepts, and what it makes of it.
func TestRulesAccept(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		role       Role
		check      func(c *Cluster) bool
		notes      []string
	}{
		{"odd control plane", local(ControlPlaneMachineCount, "3"), Workload, func(c *Cluster) bool { return c.ControlPlaneMachineCount == 3 }, nil},
		{"dev plan", local(WorkerMachineCount, "2"), Workload, func(c *Cluster) bool { return slices.Equal(c.WorkerMachineCounts, []int{2}) }, nil},
		{"dev plan md-0 count", local(WorkerMachineCount0, "4", WorkerMachineCount1, "1"), Workload,
			func(c *Cluster) bool {
				return slices.Equal(c.WorkerMachineCounts, []int{4}) && c.WorkerMachineCount == 4
			},
			[]string{"WORKER_MACHINE_COUNT_1 is not used: the dev plan has one machine deployment, md-0"}},
		{"prod plan spreads", local(ClusterPlan, "prod", WorkerMachineCount, "5"), Workload,
			func(c *Cluster) bool {
				return slices.Equal(c.WorkerMachineCounts, []int{2, 2, 1}) && c.ControlPlaneMachineCount == 3
			}, nil},
		{"prod plan per deployment", local(ClusterPlan, "prod", WorkerMachineCount, "3", WorkerMachineCount0, "1", WorkerMachineCount1, "2", WorkerMachineCount2, "2"), Workload,
			func(c *Cluster) bool {
				return slices.Equal(c.WorkerMachineCounts, []int{1, 2, 2}) && c.WorkerMachineCount == 5
			},
			[]string{"WORKER_MACHINE_COUNT 3 is not used: WORKER_MACHINE_COUNT_0, WORKER_MACHINE_COUNT_1 and WORKER_MACHINE_COUNT_2 give the prod plan's md-0, md-1 and md-2 5 workers"}},
		{"prod plan partial per deployment", local(ClusterPlan, "prod", WorkerMachineCount0, "2"), Workload,
			func(c *Cluster) bool { return slices.Equal(c.WorkerMachineCounts, []int{1, 1, 1}) },
			[]string{"WORKER_MACHINE_COUNT_0 is not used: the prod plan takes its machine deployments' workers from WORKER_MACHINE_COUNT_0, WORKER_MACHINE_COUNT_1 and WORKER_MACHINE_COUNT_2 together"}},
		{"prod management cluster with one worker", local(ClusterPlan, "prod", WorkerMachineCount, "1"), Management,
			func(c *Cluster) bool { return slices.Equal(c.WorkerMachineCounts, []int{1, 0, 0}) }, nil},

		{"MHC defaults", local(), Workload, func(c *Cluster) bool {
			h := c.HealthChecks
			return h.ControlPlane && h.Workers && h.UnknownStatusTimeout == 5*time.Minute && h.FalseStatusTimeout == 12*time.Minute &&
				h.NodeStartupTimeout == 20*time.Minute && h.MaxUnhealthyWorkers == intstr.FromString("100%")
		}, nil},
		{"MHC off", local(EnableMHC, "false", EnableMHCWorkerNode, "true"), Workload,
			func(c *Cluster) bool { return !c.HealthChecks.ControlPlane && !c.HealthChecks.Workers }, nil},
		{"MHC on", local(EnableMHC, "True", EnableMHCWorkerNode, "false"), Workload,
			func(c *Cluster) bool { return c.HealthChecks.ControlPlane && c.HealthChecks.Workers }, nil},
		{"MHC of the workers only", local(EnableMHCControlPlane, "false"), Workload,
			func(c *Cluster) bool { return !c.HealthChecks.ControlPlane && c.HealthChecks.Workers }, nil},
		{"MHC timeouts", local(MHCUnknownStatusTimeout, "90s", MHCFalseStatusTimeout, "1h30m", NodeStartupTimeout, "0", MHCMaxUnhealthyWorkerNode, "2"), Workload,
			func(c *Cluster) bool {
				h := c.HealthChecks
				return h.UnknownStatusTimeout == 90*time.Second && h.FalseStatusTimeout == 90*time.Minute && h.NodeStartupTimeout == 0 && h.MaxUnhealthyWorkers == intstr.FromInt32(2)
			}, nil},

		{"proxy off", local(HTTPProxyEnabled, "false", HTTPProxy, "http://p:3128"), Workload, func(c *Cluster) bool { return c.Proxy == nil },
			[]string{"TKG_HTTP_PROXY is not used: TKG_HTTP_PROXY_ENABLED is false"}},
		{"proxy and its completed exceptions", local(HTTPProxyEnabled, "true", HTTPProxy, "http://p:3128", HTTPSProxy, "https://p:3129", NoProxy, " .corp.example.com, 10.0.0.0/8,localhost"), Workload,
			func(c *Cluster) bool {
				return c.Proxy.HTTPProxy == "http://p:3128" && c.Proxy.HTTPSProxy == "https://p:3129" && slices.Equal(c.Proxy.NoProxy,
					[]string{".corp.example.com", "10.0.0.0/8", "localhost", "100.96.0.0/11", "100.64.0.0/13", "127.0.0.1", ".svc", ".svc.cluster.local"})
			}, []string{"TKG_HTTP_PROXY and TKG_HTTPS_PROXY are set on the Cluster (variable proxy) but not applied by the local infrastructure provider"}},
		{"IPv6 proxy exceptions", local(IPFamily, "ipv6", ClusterCIDR, "fd00:100:96::/48", ServiceCIDR, "fd00:100:64::/108", HTTPProxyEnabled, "true",
			HTTPProxy, "http://[fd00::1]:3128", HTTPSProxy, "http://[fd00::1]:3128"), Workload,
			func(c *Cluster) bool { return slices.Contains(c.Proxy.NoProxy, "::1") }, []string{"TKG_HTTP_PROXY and TKG_HTTPS_PROXY are set on the Cluster"}},
		{"control-plane labels", local(ControlPlaneNodeLabels, "tier=control, example.com/zone=a"), Workload,
			func(c *Cluster) bool {
				return slices.Equal(c.ControlPlaneNodeLabels, []Label{{Key: "tier", Value: "control"}, {Key: "example.com/zone", Value: "a"}})
			}, nil},

		{"vSphere defaults", vsphere(), Workload, func(c *Cluster) bool {
			vs := c.VSphere
			return vs.CloneMode == "fullClone" && !vs.Insecure && vs.Password == "Admin!23" && c.OSName == "ubuntu" && c.OSVersion == "20.04" && c.OSArch == "amd64" &&
				c.ControlPlaneMachine == Machine{NumCPUs: 2, MemoryMiB: 8192, DiskGiB: 40} && c.WorkerMachine == Machine{NumCPUs: 2, MemoryMiB: 4096, DiskGiB: 40}
		}, nil},
		{"vSphere default network", vsphere(VSphereNetwork, "-"), Workload, func(c *Cluster) bool { return c.VSphere.Network == "VM Network" }, nil},
		{"vSphere storage policy", vsphere(VSphereDatastore, "-", VSphereStoragePolicyID, "gold"), Workload,
			func(c *Cluster) bool { return c.VSphere.StoragePolicyID == "gold" }, nil},
		{"vSphere encoded password", vsphere(VSpherePassword, "<encoded:c2VjcmV0>"), Workload, func(c *Cluster) bool { return c.VSphere.Password == "secret" }, nil},
		{"vSphere insecure", vsphere(VSphereInsecure, "true", VSphereTLSThumbprint, "AB:CD"), Workload,
			func(c *Cluster) bool { return c.VSphere.Insecure && c.VSphere.TLSThumbprint == "" },
			[]string{"VSPHERE_TLS_THUMBPRINT is not used: VSPHERE_INSECURE is true"}},
		{"vSphere endpoint name", vsphere(VSphereControlPlaneEndpoint, "api.vc1.example.com"), Workload,
			func(c *Cluster) bool { return c.VSphere.ControlPlaneEndpoint == "api.vc1.example.com" }, nil},
		{"vSphere server outside the proxy", vsphere(HTTPProxyEnabled, "true", HTTPProxy, "http://p:3128", HTTPSProxy, "http://p:3128", NoProxy, "vcenter.example.com"), Workload,
			func(c *Cluster) bool { return c.Proxy != nil }, nil},
		{"vSphere server through an insecure proxy", vsphere(HTTPProxyEnabled, "true", HTTPProxy, "http://p:3128", HTTPSProxy, "http://p:3128", VSphereInsecure, "true"), Workload,
			func(c *Cluster) bool { return c.Proxy != nil }, nil},
		{"sizes", vsphere(Size, "small", ControlPlaneSize, "large", VSphereControlPlaneNumCPUs, "16"), Workload,
			func(c *Cluster) bool {
				return c.ControlPlaneMachine == Machine{NumCPUs: 4, MemoryMiB: 16384, DiskGiB: 40} && c.WorkerMachine == Machine{NumCPUs: 2, MemoryMiB: 4096, DiskGiB: 20}
			}, []string{"VSPHERE_CONTROL_PLANE_NUM_CPUS is not used: CONTROLPLANE_SIZE large sizes the control plane's machines"}},
		{"every node's size", vsphere(VSphereNumCPUs, "4", VSphereMemMiB, "16384", VSphereWorkerMemMiB, "6144"), Workload,
			func(c *Cluster) bool {
				return c.ControlPlaneMachine == Machine{NumCPUs: 4, MemoryMiB: 16384, DiskGiB: 40} && c.WorkerMachine == Machine{NumCPUs: 4, MemoryMiB: 6144, DiskGiB: 40}
			}, nil},
		{"photon", vsphere(OSName, "photon"), Workload, func(c *Cluster) bool { return c.OSVersion == "3" }, nil},
		{"no identity", local(), Management, func(c *Cluster) bool { return c.Identity == nil }, nil},
		{"OIDC", local(IdentityManagementType, "oidc", OIDCIssuerURL, "https://login.example.com/oauth2", OIDCClientID, "slipway",
			OIDCClientSecret, "<encoded:c2VjcmV0>", OIDCUsernameClaim, "email", LDAPHost, "ldap.example.com"), Management,
			func(c *Cluster) bool {
				o := c.Identity.OIDC
				return c.Identity.Type == "oidc" && o.IssuerURL == "https://login.example.com/oauth2" && o.ClientSecret == "secret" &&
					slices.Equal(o.Scopes, []string{"email", "profile", "groups"}) && o.UsernameClaim == "email"
			}, []string{"LDAP_HOST is not used: IDENTITY_MANAGEMENT_TYPE is oidc"}},
		{"LDAP", local(IdentityManagementType, "ldap", LDAPHost, "ldap.example.com:636", LDAPBindPassword, "pw"), Management,
			func(c *Cluster) bool {
				l := c.Identity.LDAP
				return c.Identity.Type == "ldap" && l.Host == "ldap.example.com:636" && l.BindPassword == "pw" && l.GroupSearchNameAttr == "cn"
			}, nil},
		{"identity of a workload cluster", local(IdentityManagementType, "oidc"), Workload, func(c *Cluster) bool { return c.Identity == nil },
			[]string{"IDENTITY_MANAGEMENT_TYPE is not used: a workload cluster's identity management is its management cluster's"}},
		{"API server port", vsphere(ClusterAPIServerPort, "8443"), Workload, func(c *Cluster) bool { return c.APIServerPort == 8443 }, nil},

		{"dual stack", vsphere(IPFamily, "ipv6,ipv4", ClusterCIDR, "fd00:100:96::/48,100.96.0.0/11", ServiceCIDR, "fd00:100:64::/108,100.64.0.0/13"), Workload,
			func(c *Cluster) bool {
				return slices.Equal(c.Object().Spec.ClusterNetwork.Pods.CIDRBlocks, []string{"fd00:100:96::/48", "100.96.0.0/11"}) &&
					variableOf(c, "network") == `{"ipv6Primary":true}`
			}, nil},
		{"dual stack, IPv4 primary", vsphere(IPFamily, "ipv4,ipv6", ClusterCIDR, "100.96.0.0/11,fd00:100:96::/48", ServiceCIDR, "100.64.0.0/13,fd00:100:64::/108"), Workload,
			func(c *Cluster) bool { return variableOf(c, "network") == "" }, nil},
		{"node settings", vsphere(NTPServers, "time.example.com, 10.0.0.1", WorkerNodeNameservers, "10.0.0.2", NodeIPAMIPPoolName, "pool-a", EnableAuditLogging, "true"), Workload,
			func(c *Cluster) bool {
				n := c.Nodes
				return slices.Equal(n.NTPServers, []string{"time.example.com", "10.0.0.1"}) && slices.Equal(n.WorkerNameservers, []string{"10.0.0.2"}) &&
					n.IPPool == "pool-a" && n.AuditLogging &&
					variableOf(c, "network") == `{"addressesFromPools":[{"apiGroup":"ipam.cluster.x-k8s.io","kind":"InClusterIPPool","name":"pool-a"}]}`
			}, nil},
		{"what the local provider does not use", local(WorkerSize, "large", VSphereServer, "vc", VSphereNumCPUs, "1", OSName, "photon", ClusterAPIServerPort, "1"), Workload,
			func(c *Cluster) bool { return c.VSphere == nil && c.APIServerPort == 0 }, []string{
				"WORKER_SIZE, VSPHERE_NUM_CPUS, OS_NAME are not used by the local infrastructure provider: its nodes are made of this host's namespaces",
				"VSPHERE_SERVER is not used by the local infrastructure provider: its nodes are made of this host's namespaces, not vSphere VMs",
				"CLUSTER_API_SERVER_PORT is not used by the local infrastructure provider: its API servers listen on port 6443 of their nodes and load balancer, each with its own address on the bridge",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := complete(t, tc.file, tc.role)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Errorf("completed as %+v (proxy %+v, vSphere %+v)", c, c.Proxy, c.VSphere)
			}
			for _, want := range tc.notes {
				if !slices.ContainsFunc(c.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
					t.Errorf("notes %q, want one starting %q", c.Notes, want)
				}
			}
			if tc.notes == nil && len(c.Notes) > 0 {
				t.Errorf("notes %q, want none", c.Notes)
			}
		})
	}
}

// TestErrorsAreCollected checks that one run names every variable that breaks a rule.
func TestErrorsAreCollected(t *testing.T) {
	_, err := complete(t, vsphere(VSphereFolder, "-", OSName, "centos", ClusterAPIServerPort, "0", EnableMHC, "yes"), Workload)
	for _, want := range []string{VSphereFolder, `OS_NAME "centos"`, `CLUSTER_API_SERVER_PORT "0"`, `ENABLE_MHC "yes"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error naming %s", err, want)
		}
	}
}

// variableOf is the JSON of the Cluster's topology variable name, or "" when it has none.
func variableOf(c *Cluster, name string) string {
	for _, v := range c.Object().Spec.Topology.Variables {
		if v.Name == name {
			return string(v.Value.Raw)
		}
	}
	return ""
}
