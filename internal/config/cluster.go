package config

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"

	"github.com/slipway-dev/slipway/internal/tkg"
)

// Role is what a cluster is for: the management cluster or a workload cluster.
type Role string

// Roles.
const (
	Management Role = "management"
	Workload   Role = "workload"
)

// Providers slipway runs clusters on, and the ClusterClass tkg-pkg installs for each.
var classes = map[string]string{
	"local":   "tkg-local-default-v1.0.0",
	"vsphere": "tkg-vsphere-default-v1.0.0",
}

// nameRule is TKG's cluster name rule.
var nameRule = regexp.MustCompile(`^[a-z0-9][a-z0-9-.]{0,61}[a-z0-9]$`)

// Cluster is a completed, valid configuration of one cluster.
type Cluster struct {
	Role                     Role
	Name                     string
	Namespace                string
	Plan                     string
	InfrastructureProvider   string
	ControlPlaneMachineCount int
	// WorkerMachineCount is the cluster's workers, WorkerMachineCounts those of each of its
	// machine deployments: md-0 on the dev plan, md-0, md-1 and md-2 on prod.
	WorkerMachineCount  int
	WorkerMachineCounts []int
	CNI                 string
	ClusterCIDR         string
	ServiceCIDR         string
	IPFamily            string
	// KubernetesVersion is the version asked for (v1.35.4 or v1.35.4+vmware.1): the TKR
	// resolver turns it into the release's.
	KubernetesVersion         string
	OSName, OSVersion, OSArch string
	// HealthChecks are the machine health checks of the control plane and the workers.
	HealthChecks HealthChecks
	// Proxy is the nodes' HTTP proxy; nil when TKG_HTTP_PROXY_ENABLED is not true.
	Proxy *Proxy
	// Nodes are the nodes' time and name servers, addresses, audit and trust.
	Nodes Nodes
	// ControlPlaneNodeLabels label the control-plane nodes.
	ControlPlaneNodeLabels []Label
	// APIServerPort is the port of the API server endpoint; 0 leaves the ClusterClass's default.
	APIServerPort int
	// ControlPlaneMachine and WorkerMachine are the nodes' sizes (vSphere).
	ControlPlaneMachine, WorkerMachine Machine
	// Identity is a management cluster's identity management; nil for none.
	Identity *Identity
	// VSphere is where and as whom the cluster's VMs are made; nil on other providers.
	VSphere *VSphere
	// Notes are what the flows should tell the user about the configuration that is not an
	// error: variables that the provider does not use, values that others override.
	Notes []string
}

// Defaults are the values of the defaults that depend on the caller.
type Defaults struct {
	// KubernetesVersion is the default release's Kubernetes version.
	KubernetesVersion string
	// Now names a management cluster whose name is not set, as TKG does.
	Now time.Time
}

// Complete applies TKG's defaults to v, telling notify of the main ones as TKG does ("Using
// default value for X = Y. Reason: X variable is not set"), then checks every rule. The error
// names every variable that breaks one, with its value and what is accepted. Cluster.Notes says
// what is set but not used.
func Complete(v *Variables, role Role, d Defaults, notify func(format string, args ...any)) (*Cluster, error) {
	k := &completer{v: v, notify: notify, c: &Cluster{Role: role}}
	k.basics(d)
	k.machineCounts()
	k.healthChecks()
	k.proxy()
	k.identity()
	k.nodes()
	k.autoscaler()
	k.controlPlaneNodeLabels()
	switch k.c.InfrastructureProvider {
	case "vsphere":
		k.vsphere()
		k.nodeSizes()
		k.operatingSystem()
		k.apiServerPort()
	case "local":
		k.local()
	}
	return k.c, errors.Join(append(k.errs, k.c.validate()...)...)
}

// completer completes one configuration: it reads the variables, applies the defaults, and
// gathers every error and note.
type completer struct {
	v      *Variables
	notify func(format string, args ...any)
	c      *Cluster
	errs   []error
}

// def returns a variable's value, or applies its default and tells it.
func (k *completer) def(name, value string) string {
	if got, ok := k.v.Get(name); ok {
		return got
	}
	k.notify("Using default value for %s = %s. Reason: %s variable is not set", name, value, name)
	k.v.set(name, value, "default")
	return value
}

// value returns a variable's value, or value when it is not set: the defaults TKG takes from
// its config_default.yaml without a word.
func (k *completer) value(name, value string) string {
	if got, ok := k.v.Get(name); ok {
		return got
	}
	return value
}

func (k *completer) bad(format string, args ...any) {
	k.errs = append(k.errs, fmt.Errorf(format, args...))
}

func (k *completer) note(format string, args ...any) {
	k.c.Notes = append(k.c.Notes, fmt.Sprintf(format, args...))
}

// number parses a whole number of at least minimum; a value that is no number is -1, so that no
// later rule refuses it again.
func (k *completer) number(name, value string, minimum int) int {
	n, err := strconv.Atoi(value)
	if err != nil || n < minimum {
		k.bad("invalid %s %q: use a whole number of at least %d", name, value, minimum)
	}
	if err != nil {
		return -1
	}
	return n
}

// boolean parses true or false, in any case.
func (k *completer) boolean(name, value string) bool {
	switch strings.ToLower(value) {
	case "true":
		return true
	case "false":
		return false
	}
	k.bad("invalid %s %q: use true or false", name, value)
	return false
}

// set returns the variables among names that are set.
func (k *completer) set(names ...string) []string {
	var set []string
	for _, n := range names {
		if _, ok := k.v.Get(n); ok {
			set = append(set, n)
		}
	}
	return set
}

// unused notes the variables among names that are set but that the provider does not use.
func (k *completer) unused(why string, names ...string) {
	set := k.set(names...)
	switch len(set) {
	case 0:
	case 1:
		k.note("%s is not used by the %s infrastructure provider: %s", set[0], k.c.InfrastructureProvider, why)
	default:
		k.note("%s are not used by the %s infrastructure provider: %s", strings.Join(set, ", "), k.c.InfrastructureProvider, why)
	}
}

// secret reads a password or client secret, given as it is or <encoded:BASE64>; a refusal says
// what is wrong with the value, not what it is.
func (k *completer) secret(name string) string {
	value, ok := k.v.Get(name)
	if !ok {
		return ""
	}
	plain, err := decoded(value)
	if err != nil {
		k.bad("invalid %s <encoded:…>: %v: write the value as it is, or base64-encoded as <encoded:BASE64>", name, err)
	}
	return plain
}

// unusedBy notes the variables among names that are set but not used, and why.
func (k *completer) unusedBy(why string, names ...string) {
	set := k.set(names...)
	if len(set) > 0 {
		k.note("%s not used: %s", isOrAre(set), why)
	}
}

// basics reads the cluster's name, plan, provider, CNI, networks, version, namespace and OS.
func (k *completer) basics(d Defaults) {
	c := k.c
	c.InfrastructureProvider = k.def(InfrastructureProvider, "local")
	if got, ok := k.v.Get(ClusterName); ok {
		c.Name = got
	} else if c.Role == Management {
		c.Name = k.def(ClusterName, fmt.Sprintf("tkg-mgmt-%s-%s", c.InfrastructureProvider, d.Now.UTC().Format("20060102150405")))
	}
	c.Plan = k.def(ClusterPlan, "dev")
	c.CNI = k.def(CNI, "antrea")
	c.IPFamily = k.def(IPFamily, "ipv4")
	c.ClusterCIDR = k.def(ClusterCIDR, "100.96.0.0/11")
	c.ServiceCIDR = k.def(ServiceCIDR, "100.64.0.0/13")
	c.KubernetesVersion = k.def(KubernetesVersion, d.KubernetesVersion)
	c.Namespace = tkg.SystemNamespace
	if c.Role == Workload {
		c.Namespace = k.def(Namespace, "default")
	} else if ns, ok := k.v.Get(Namespace); ok && ns != tkg.SystemNamespace {
		k.bad("invalid %s %q: a management cluster's objects live in %s: drop %s", Namespace, ns, tkg.SystemNamespace, Namespace)
	}
	c.OSName, _ = k.v.Get(OSName)
	c.OSVersion, _ = k.v.Get(OSVersion)
	c.OSArch, _ = k.v.Get(OSArch)
}

// validate checks TKG's rules on a completed configuration.
func (c *Cluster) validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Name == "" {
		bad("%s is not set: name the cluster (lowercase letters, digits, '-' and '.')", ClusterName)
	} else if !nameRule.MatchString(c.Name) {
		bad("invalid %s %q: cluster name doesn't match regex %s, can contain only lowercase alphanumeric characters, '.' and '-'", ClusterName, c.Name, nameRule)
	}
	if _, ok := classes[c.InfrastructureProvider]; !ok {
		bad("invalid %s %q: use local or vsphere", InfrastructureProvider, c.InfrastructureProvider)
	}
	if c.InfrastructureProvider == "local" && nameRule.MatchString(c.Name) {
		// Every node's processes and sockets live under the local cluster's name.
		if err := localcluster.ValidateName(c.Name); err != nil {
			bad("invalid %s %q for the local infrastructure provider: %v", ClusterName, c.Name, err)
		}
	}
	if c.Plan != "dev" && c.Plan != "prod" {
		bad("invalid %s %q: use dev or prod", ClusterPlan, c.Plan)
	}
	if c.ControlPlaneMachineCount > 0 && c.ControlPlaneMachineCount%2 == 0 {
		bad("invalid %s %d: the control plane needs an odd number of machines (1, 3, 5, …) for etcd to keep a quorum", ControlPlaneMachineCount, c.ControlPlaneMachineCount)
	}
	if c.Role == Management && c.WorkerMachineCount == 0 {
		bad("invalid %s %d: a management cluster needs at least one worker for its controllers", WorkerMachineCount, c.WorkerMachineCount)
	}
	switch {
	case c.CNI == "antrea":
	case c.Role == Management && (c.CNI == "calico" || c.CNI == "none"):
		bad("invalid %s %q: a management cluster runs antrea (TKG forbids calico and none there): set %s to antrea or drop it", CNI, c.CNI, CNI)
	case c.CNI != "calico" && c.CNI != "none":
		bad("invalid %s %q: use antrea, calico or none", CNI, c.CNI)
	}
	if !slices.Contains(ipFamilies, c.IPFamily) {
		bad("invalid %s %q: use %s", IPFamily, c.IPFamily, strings.Join(ipFamilies, ", "))
	} else {
		pods := c.cidrs(ClusterCIDR, c.ClusterCIDR, false, &errs)
		services := c.cidrs(ServiceCIDR, c.ServiceCIDR, true, &errs)
		for i := range pods {
			if i < len(services) && (pods[i].Contains(services[i].IP) || services[i].Contains(pods[i].IP)) {
				bad("%s %q and %s %q overlap: pods and services need separate ranges", ClusterCIDR, c.ClusterCIDR, ServiceCIDR, c.ServiceCIDR)
			}
		}
	}
	if !strings.HasPrefix(c.KubernetesVersion, "v") {
		bad("invalid %s %q: a Kubernetes version starts with v, as v1.35.4", KubernetesVersion, c.KubernetesVersion)
	}
	return errs
}

// maxServiceHostBits bounds the service CIDR as kube-apiserver does: at most 2^20 addresses
// (/12 in IPv4, /108 in IPv6).
const maxServiceHostBits = 20

// ipFamilies are TKG's IP families: one, or both for dual stack, the primary first.
var ipFamilies = []string{"ipv4", "ipv6", "ipv4,ipv6", "ipv6,ipv4"}

// families returns the cluster's IP families, primary first.
func (c *Cluster) families() []string { return strings.Split(c.IPFamily, ",") }

// hasFamily says whether an address is of one of the cluster's IP families.
func (c *Cluster) hasFamily(ip net.IP) bool {
	family := "ipv6"
	if ip.To4() != nil {
		family = "ipv4"
	}
	return slices.Contains(c.families(), family)
}

// cidrs parses the CIDRs of a comma-separated value, one per IP family of the cluster in its
// order; a service CIDR is bounded in size. It returns nil when one is wrong.
func (c *Cluster) cidrs(name, value string, service bool, errs *[]error) []*net.IPNet {
	families, parts := c.families(), strings.Split(value, ",")
	wrongType := fmt.Errorf("invalid %s %q, expected to be a CIDR of type %q (%s)", name, value, c.IPFamily, IPFamily)
	if len(parts) != len(families) {
		*errs = append(*errs, wrongType)
		return nil
	}
	var out []*net.IPNet
	for i, part := range parts {
		_, n, err := net.ParseCIDR(strings.TrimSpace(part))
		if err != nil || (n.IP.To4() != nil) != (families[i] == "ipv4") {
			*errs = append(*errs, wrongType)
			return nil
		}
		if ones, bits := n.Mask.Size(); service && bits-ones > maxServiceHostBits {
			*errs = append(*errs, fmt.Errorf("invalid %s %q, expected netmask to be \"/%d\" or greater", name, value, bits-maxServiceHostBits))
			return nil
		}
		out = append(out, n)
	}
	return out
}

// ClassName is the ClusterClass the cluster is made from: the one tkg-pkg installs for its
// infrastructure provider.
func (c *Cluster) ClassName() string { return classes[c.InfrastructureProvider] }
