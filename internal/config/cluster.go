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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// The variables slipway reads, by TKG's names.
const (
	ClusterName              = "CLUSTER_NAME"
	ClusterPlan              = "CLUSTER_PLAN"
	InfrastructureProvider   = "INFRASTRUCTURE_PROVIDER"
	Namespace                = "NAMESPACE"
	ControlPlaneMachineCount = "CONTROL_PLANE_MACHINE_COUNT"
	WorkerMachineCount       = "WORKER_MACHINE_COUNT"
	CNI                      = "CNI"
	ClusterCIDR              = "CLUSTER_CIDR"
	ServiceCIDR              = "SERVICE_CIDR"
	IPFamily                 = "TKG_IP_FAMILY"
	KubernetesVersion        = "KUBERNETES_VERSION"
	OSName                   = "OS_NAME"
	OSVersion                = "OS_VERSION"
	OSArch                   = "OS_ARCH"
	// CustomImageRepository is a registry path holding a copy of every image and bundle, where
	// the package repository and the TKR catalogue are read.
	CustomImageRepository = "TKG_CUSTOM_IMAGE_REPOSITORY"
)

// knownVariables are the variables above: the environment overrides only these, and any other
// variable of a file is reported as unknown.
var knownVariables = []string{ClusterName, ClusterPlan, InfrastructureProvider, Namespace, ControlPlaneMachineCount,
	WorkerMachineCount, CNI, ClusterCIDR, ServiceCIDR, IPFamily, KubernetesVersion, OSName, OSVersion, OSArch, CustomImageRepository}

func known(name string) bool { return slices.Contains(knownVariables, name) }

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
	WorkerMachineCount       int
	CNI                      string
	ClusterCIDR              string
	ServiceCIDR              string
	IPFamily                 string
	// KubernetesVersion is the version asked for (v1.35.4 or v1.35.4+vmware.1): the TKR
	// resolver turns it into the release's.
	KubernetesVersion         string
	OSName, OSVersion, OSArch string
}

// Defaults are the values of the defaults that depend on the caller.
type Defaults struct {
	// KubernetesVersion is the default release's Kubernetes version.
	KubernetesVersion string
	// Now names a management cluster whose name is not set, as TKG does.
	Now time.Time
}

// Complete applies TKG's defaults to v, telling notify of each as TKG does ("Using default
// value for X = Y. Reason: X variable is not set"), then checks every rule. The error names
// every variable that breaks one, with its value and what is accepted.
func Complete(v *Variables, role Role, d Defaults, notify func(format string, args ...any)) (*Cluster, error) {
	def := func(name, value string) string {
		if got, ok := v.Get(name); ok {
			return got
		}
		notify("Using default value for %s = %s. Reason: %s variable is not set", name, value, name)
		v.set(name, value, "default")
		return value
	}
	c := &Cluster{Role: role}
	c.InfrastructureProvider = def(InfrastructureProvider, "local")
	if got, ok := v.Get(ClusterName); ok {
		c.Name = got
	} else if role == Management {
		c.Name = def(ClusterName, fmt.Sprintf("tkg-mgmt-%s-%s", c.InfrastructureProvider, d.Now.UTC().Format("20060102150405")))
	}
	c.Plan = def(ClusterPlan, "dev")
	replicas := "1"
	if c.Plan == "prod" {
		replicas = "3"
	}
	var errs []error
	count := func(name, value string, min int) int {
		n, err := strconv.Atoi(value)
		if err != nil || n < min {
			errs = append(errs, fmt.Errorf("invalid %s %q: use a whole number of at least %d", name, value, min))
		}
		return n
	}
	c.ControlPlaneMachineCount = count(ControlPlaneMachineCount, def(ControlPlaneMachineCount, replicas), 1)
	c.WorkerMachineCount = count(WorkerMachineCount, def(WorkerMachineCount, replicas), 0)
	c.CNI = def(CNI, "antrea")
	c.IPFamily = def(IPFamily, "ipv4")
	c.ClusterCIDR = def(ClusterCIDR, "100.96.0.0/11")
	c.ServiceCIDR = def(ServiceCIDR, "100.64.0.0/13")
	c.KubernetesVersion = def(KubernetesVersion, d.KubernetesVersion)
	c.Namespace = tkg.SystemNamespace
	if role == Workload {
		c.Namespace = def(Namespace, "default")
	} else if ns, ok := v.Get(Namespace); ok && ns != tkg.SystemNamespace {
		errs = append(errs, fmt.Errorf("invalid %s %q: a management cluster's objects live in %s: drop %s", Namespace, ns, tkg.SystemNamespace, Namespace))
	}
	c.OSName, _ = v.Get(OSName)
	c.OSVersion, _ = v.Get(OSVersion)
	c.OSArch, _ = v.Get(OSArch)
	return c, errors.Join(append(errs, c.validate()...)...)
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
	if c.Role == Management && c.WorkerMachineCount < 1 {
		bad("invalid %s %d: a management cluster needs at least one worker for its controllers", WorkerMachineCount, c.WorkerMachineCount)
	}
	switch {
	case c.CNI == "antrea":
	case c.Role == Management && (c.CNI == "calico" || c.CNI == "none"):
		bad("invalid %s %q: a management cluster runs antrea (TKG forbids calico and none there): set %s to antrea or drop it", CNI, c.CNI, CNI)
	case c.CNI != "calico" && c.CNI != "none":
		bad("invalid %s %q: use antrea, calico or none", CNI, c.CNI)
	}
	if c.IPFamily != "ipv4" && c.IPFamily != "ipv6" {
		bad("invalid %s %q: use ipv4 or ipv6", IPFamily, c.IPFamily)
	}
	pods := c.cidr(ClusterCIDR, c.ClusterCIDR, 0, &errs)
	services := c.cidr(ServiceCIDR, c.ServiceCIDR, 12, &errs)
	if pods != nil && services != nil && (pods.Contains(services.IP) || services.Contains(pods.IP)) {
		bad("%s %q and %s %q overlap: pods and services need separate ranges", ClusterCIDR, c.ClusterCIDR, ServiceCIDR, c.ServiceCIDR)
	}
	if !strings.HasPrefix(c.KubernetesVersion, "v") {
		bad("invalid %s %q: a Kubernetes version starts with v, as v1.35.4", KubernetesVersion, c.KubernetesVersion)
	}
	return errs
}

// cidr parses one CIDR of the cluster's IP family; minBits > 0 asks for a netmask of at
// least that many bits (IPv4).
func (c *Cluster) cidr(name, value string, minBits int, errs *[]error) *net.IPNet {
	_, n, err := net.ParseCIDR(value)
	if err != nil || (n.IP.To4() != nil) != (c.IPFamily == "ipv4") {
		*errs = append(*errs, fmt.Errorf("invalid %s %q, expected to be a CIDR of type %q (%s)", name, value, c.IPFamily, IPFamily))
		return nil
	}
	if ones, _ := n.Mask.Size(); minBits > 0 && c.IPFamily == "ipv4" && ones < minBits {
		*errs = append(*errs, fmt.Errorf("invalid %s %q, expected netmask to be \"/%d\" or greater", name, value, minBits))
		return nil
	}
	return n
}

// ClassName is the ClusterClass the cluster is made from: the one tkg-pkg installs for its
// infrastructure provider.
func (c *Cluster) ClassName() string { return classes[c.InfrastructureProvider] }

// Object returns the ClusterClass Cluster of the configuration: the topology of the provider's
// ClusterClass with the configured counts, networks and version. A management cluster is
// labelled as TKG labels it.
func (c *Cluster) Object() *clusterv1.Cluster {
	cl := &clusterv1.Cluster{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   c.Namespace,
			Name:        c.Name,
			Annotations: map[string]string{tkg.AnnotationPlan: c.Plan},
		},
	}
	if c.Role == Management {
		cl.Labels = map[string]string{tkg.LabelManagementCluster: ""}
	}
	cl.Spec.ClusterNetwork = clusterv1.ClusterNetwork{
		Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{c.ClusterCIDR}},
		Services: clusterv1.NetworkRanges{CIDRBlocks: []string{c.ServiceCIDR}},
	}
	cl.Spec.Topology = clusterv1.Topology{
		ClassRef:     clusterv1.ClusterClassRef{Name: c.ClassName()},
		Version:      c.KubernetesVersion,
		ControlPlane: clusterv1.ControlPlaneTopology{Replicas: ptr.To(int32(c.ControlPlaneMachineCount))},
		Workers: clusterv1.WorkersTopology{MachineDeployments: []clusterv1.MachineDeploymentTopology{
			{Class: "tkg-worker", Name: "md-0", Replicas: ptr.To(int32(c.WorkerMachineCount))},
		}},
	}
	return cl
}

// ClusterBootstrap returns the ClusterBootstrap TKG's CLI writes for a management cluster
// (seeds/000): wildcard refNames that the release's template completes, through the
// add-missing-fields-from-tkr annotation, with the CNI, CPI and CSI.
func (c *Cluster) ClusterBootstrap(tkrName string) *runv1alpha3.ClusterBootstrap {
	return c.clusterBootstrap(tkrName, &runv1alpha3.ClusterBootstrapTemplateSpec{
		Kapp: &runv1alpha3.ClusterBootstrapPackage{RefName: "kapp-controller*"},
		AdditionalPackages: []*runv1alpha3.ClusterBootstrapPackage{
			{RefName: "metrics-server*"}, {RefName: "secretgen-controller*"}, {RefName: "pinniped*"},
		},
	})
}

// clusterBootstrap is the cluster's ClusterBootstrap of a spec, completed from the release.
func (c *Cluster) clusterBootstrap(tkrName string, spec *runv1alpha3.ClusterBootstrapTemplateSpec) *runv1alpha3.ClusterBootstrap {
	return &runv1alpha3.ClusterBootstrap{
		TypeMeta: metav1.TypeMeta{APIVersion: runv1alpha3.GroupVersion.String(), Kind: "ClusterBootstrap"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   c.Namespace,
			Name:        c.Name,
			Annotations: map[string]string{runv1alpha3.AnnotationAddMissingFieldsFromTKR: tkrName},
		},
		Spec: spec,
	}
}

// WorkloadClusterBootstrap returns the ClusterBootstrap TKG's CLI writes beside a workload
// Cluster whose CNI is not the release's default: the CNI by a wildcard refName, the rest
// filled from the release's template (add-missing-fields-from-tkr).
func (c *Cluster) WorkloadClusterBootstrap(tkrName string) *runv1alpha3.ClusterBootstrap {
	return c.clusterBootstrap(tkrName, &runv1alpha3.ClusterBootstrapTemplateSpec{CNI: &runv1alpha3.ClusterBootstrapPackage{RefName: c.CNI + "*"}})
}

// ReleaseOf says whether a release's version (v1.35.4+vmware.1-tkg.1) is one of the Kubernetes
// version asked for (KUBERNETES_VERSION: v1.35.4, v1.35.4+vmware.1 or the release's own).
func ReleaseOf(release, asked string) bool {
	return release == asked || strings.HasPrefix(release, asked+"+") || strings.HasPrefix(release, asked+"-")
}
