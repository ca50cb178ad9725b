package config

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Labels and annotations TKG's overlays put on a Cluster.
const (
	annotationControlPlaneEndpoint = "tkg.tanzu.vmware.com/cluster-controlplane-endpoint"
	annotationOSInfo               = "osInfo"
)

// workerClass is the machine deployment class of both ClusterClasses.
const workerClass = "tkg-worker"

// Object returns the ClusterClass Cluster of the configuration: the topology of the provider's
// ClusterClass with the configured counts, networks, version, health checks and the class's
// variables. A management cluster is labelled as TKG labels it.
func (c *Cluster) Object() *clusterv1.Cluster {
	cl := &clusterv1.Cluster{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   c.Namespace,
			Name:        c.Name,
			Annotations: map[string]string{tkg.AnnotationPlan: c.Plan},
		},
	}
	// As TKG's overlay, every Cluster is labelled with its name.
	cl.Labels = map[string]string{tkg.LabelClusterName: c.Name}
	if c.Role == Management {
		cl.Labels[tkg.LabelManagementCluster] = ""
	}
	cl.Spec.ClusterNetwork = clusterv1.ClusterNetwork{
		Pods:     clusterv1.NetworkRanges{CIDRBlocks: strings.Split(c.ClusterCIDR, ",")},
		Services: clusterv1.NetworkRanges{CIDRBlocks: strings.Split(c.ServiceCIDR, ",")},
	}
	cl.Spec.Topology = clusterv1.Topology{
		ClassRef: clusterv1.ClusterClassRef{Name: c.ClassName()},
		Version:  c.KubernetesVersion,
		ControlPlane: clusterv1.ControlPlaneTopology{
			Replicas:    ptr.To(int32(c.ControlPlaneMachineCount)),
			HealthCheck: c.HealthChecks.controlPlane(),
		},
		Workers:   clusterv1.WorkersTopology{MachineDeployments: c.machineDeployments()},
		Variables: c.variables(),
	}
	if vs := c.VSphere; vs != nil {
		// As TKG's vSphere overlay: the resolver picks the OVA of the OS for every part.
		cl.Annotations[annotationControlPlaneEndpoint] = vs.ControlPlaneEndpoint
		cl.Annotations[annotationOSInfo] = strings.Join([]string{c.OSName, c.OSVersion, c.OSArch}, ",")
		cl.Spec.Topology.ControlPlane.Metadata.Annotations = c.osImageSelector()
		for i := range cl.Spec.Topology.Workers.MachineDeployments {
			cl.Spec.Topology.Workers.MachineDeployments[i].Metadata.Annotations = c.osImageSelector()
		}
	}
	return cl
}

// osImageSelector is the annotation that makes the TKR resolver choose the OS's vSphere image.
func (c *Cluster) osImageSelector() map[string]string {
	return map[string]string{runv1alpha3.AnnotationResolveOSImage: "image-type=ova,os-name=" + c.OSName}
}

// machineDeployments are the plan's machine deployments, md-0 (and md-1, md-2 on prod).
func (c *Cluster) machineDeployments() []clusterv1.MachineDeploymentTopology {
	counts := c.WorkerMachineCounts
	if len(counts) == 0 {
		counts = []int{c.WorkerMachineCount}
	}
	mds := make([]clusterv1.MachineDeploymentTopology, len(counts))
	for i, n := range counts {
		mds[i] = clusterv1.MachineDeploymentTopology{
			Class: workerClass, Name: fmt.Sprintf("md-%d", i), Replicas: ptr.To(int32(n)),
			HealthCheck: c.HealthChecks.worker(),
		}
	}
	return mds
}

// vcenterVariable is the vSphere ClusterClass's vcenter variable.
type vcenterVariable struct {
	Server          string `json:"server"`
	TLSThumbprint   string `json:"tlsThumbprint,omitempty"`
	Datacenter      string `json:"datacenter"`
	Datastore       string `json:"datastore,omitempty"`
	Folder          string `json:"folder,omitempty"`
	ResourcePool    string `json:"resourcePool,omitempty"`
	Network         string `json:"network"`
	StoragePolicyID string `json:"storagePolicyID,omitempty"`
	CloneMode       string `json:"cloneMode"`
}

// roleVariable is the ClusterClasses' controlPlane and worker variables.
type roleVariable struct {
	Machine    *Machine     `json:"machine,omitempty"`
	Network    *roleNetwork `json:"network,omitempty"`
	NodeLabels []Label      `json:"nodeLabels,omitempty"`
}

// roleNetwork is the network of a role's nodes.
type roleNetwork struct {
	Nameservers []string `json:"nameservers,omitempty"`
}

func networkOf(nameservers []string) *roleNetwork {
	if len(nameservers) == 0 {
		return nil
	}
	return &roleNetwork{Nameservers: nameservers}
}

// poolRef names an IP pool, as the vSphere ClusterClass's network variable lists them.
type poolRef struct {
	APIGroup string `json:"apiGroup"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// variables are the values of the provider's ClusterClass variables that the configuration
// sets, as TKG's config_variable_association maps them; the local ClusterClass has few.
func (c *Cluster) variables() []clusterv1.ClusterVariable {
	var vars []clusterv1.ClusterVariable
	add := func(name string, value any) {
		// The values are strings, numbers and lists of them: marshalling cannot fail.
		raw, _ := json.Marshal(value)
		vars = append(vars, clusterv1.ClusterVariable{Name: name, Value: apiextensionsv1.JSON{Raw: raw}})
	}
	if vs := c.VSphere; vs != nil {
		add("vcenter", vcenterVariable{Server: vs.Server, TLSThumbprint: vs.TLSThumbprint, Datacenter: vs.Datacenter,
			Datastore: vs.Datastore, Folder: vs.Folder, ResourcePool: vs.ResourcePool, Network: vs.Network,
			StoragePolicyID: vs.StoragePolicyID, CloneMode: vs.CloneMode})
		if vs.SSHAuthorizedKey != "" {
			add("user", map[string][]string{"sshAuthorizedKeys": {vs.SSHAuthorizedKey}})
		}
		add("apiServerEndpoint", vs.ControlPlaneEndpoint)
		if c.APIServerPort != 0 {
			add("apiServerPort", c.APIServerPort)
		}
		add("controlPlane", roleVariable{Machine: &c.ControlPlaneMachine, Network: networkOf(c.Nodes.ControlPlaneNameservers), NodeLabels: c.ControlPlaneNodeLabels})
		add("worker", roleVariable{Machine: &c.WorkerMachine, Network: networkOf(c.Nodes.WorkerNameservers)})
		c.nodeVariables(add)
	} else {
		if len(c.ControlPlaneNodeLabels) > 0 {
			add("controlPlane", roleVariable{NodeLabels: c.ControlPlaneNodeLabels})
		}
		// The local nodes pull from TKG_CUSTOM_IMAGE_REPOSITORY's copy on the host.
		if c.Nodes.ImageRepository != "" {
			add("imageRepository", map[string]string{"host": c.Nodes.ImageRepository})
		}
	}
	if c.Proxy != nil {
		add("proxy", c.Proxy)
	}
	return vars
}

// nodeVariables are the vSphere ClusterClass's variables of the node settings, as TKG's
// config_variable_association maps them.
func (c *Cluster) nodeVariables(add func(name string, value any)) {
	n := c.Nodes
	if len(n.NTPServers) > 0 {
		add("ntpServers", n.NTPServers)
	}
	add("auditLogging", map[string]bool{"enabled": n.AuditLogging})
	if len(n.TrustedCAs) > 0 {
		add("trust", map[string][]TrustedCA{"additionalTrustedCAs": n.TrustedCAs})
	}
	if n.ImageRepository != "" {
		add("imageRepository", map[string]any{"host": n.ImageRepository,
			"tlsCertificateValidation": map[string]bool{"enabled": !n.SkipImageRepositoryTLSVerify}})
	}
	network := map[string]any{}
	if n.IPPool != "" {
		network["addressesFromPools"] = []poolRef{{APIGroup: "ipam.cluster.x-k8s.io", Kind: "InClusterIPPool", Name: n.IPPool}}
	}
	// A dual-stack cluster whose TKG_IP_FAMILY names IPv6 first advertises and binds on IPv6:
	// the ClusterClass's network.ipv6Primary (its IP families come from the CIDRs).
	if c.IPFamily == "ipv6,ipv4" {
		network["ipv6Primary"] = true
	}
	if len(network) > 0 {
		add("network", network)
	}
}

// Secret returns the vSphere credentials Secret TKG writes beside a vSphere Cluster: named
// after the cluster, in its namespace, as the ClusterClass's identityRef names it. It is nil on
// other providers.
func (c *Cluster) Secret() *corev1.Secret {
	if c.VSphere == nil {
		return nil
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name},
		StringData: map[string]string{"username": c.VSphere.Username, "password": c.VSphere.Password},
	}
}

// Objects returns what is applied to create the cluster, in order: the vSphere credentials
// Secret (vSphere), the Cluster, then its ClusterBootstrap: for a management cluster the one
// TKG's CLI writes, after its pinniped values Secret, for a workload cluster one only when its CNI is not the release's default
// (antrea), the Cluster annotated that it brings its own.
func (c *Cluster) Objects(tkrName string) []client.Object {
	var objs []client.Object
	if s := c.Secret(); s != nil {
		objs = append(objs, s)
	}
	cl := c.Object()
	objs = append(objs, cl)
	switch {
	case c.Role == Management:
		objs = append(objs, c.PinnipedValues(), c.ClusterBootstrap(tkrName))
	case c.CNI != "antrea":
		cl.Annotations[runv1alpha3.AnnotationCustomClusterBootstrap] = ""
		objs = append(objs, c.WorkloadClusterBootstrap(tkrName))
	}
	return objs
}

// ClusterBootstrap returns the ClusterBootstrap TKG's CLI writes for a management cluster
// (seeds/000): wildcard refNames that the release's template completes, through the
// add-missing-fields-from-tkr annotation, with the CNI, CPI and CSI. Pinniped's values are the
// Secret PinnipedValues, which the addons manager adopts for the cluster.
func (c *Cluster) ClusterBootstrap(tkrName string) *runv1alpha3.ClusterBootstrap {
	return c.clusterBootstrap(tkrName, &runv1alpha3.ClusterBootstrapTemplateSpec{
		Kapp: &runv1alpha3.ClusterBootstrapPackage{RefName: "kapp-controller*"},
		AdditionalPackages: []*runv1alpha3.ClusterBootstrapPackage{
			{RefName: "metrics-server*"}, {RefName: "secretgen-controller*"},
			{RefName: "pinniped*", ValuesFrom: &runv1alpha3.ValuesFrom{SecretRef: c.PinnipedValuesName()}},
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
// filled from the release's template (add-missing-fields-from-tkr). With CNI none it names no
// CNI and is annotated that the cluster's CNI is the user's, so none is added.
func (c *Cluster) WorkloadClusterBootstrap(tkrName string) *runv1alpha3.ClusterBootstrap {
	if c.CNI == "none" {
		cb := c.clusterBootstrap(tkrName, &runv1alpha3.ClusterBootstrapTemplateSpec{})
		cb.Annotations[runv1alpha3.AnnotationUnmanagedCNI] = ""
		return cb
	}
	return c.clusterBootstrap(tkrName, &runv1alpha3.ClusterBootstrapTemplateSpec{CNI: &runv1alpha3.ClusterBootstrapPackage{RefName: c.CNI + "*"}})
}
