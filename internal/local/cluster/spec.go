package cluster

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
)

// Roles of nodes.
const (
	RoleControlPlane = "control-plane"
	RoleWorker       = "worker"
)

// Ports every control-plane node listens on, on its address on the bridge.
const (
	APIServerPort = 6443
	EtcdPort      = 2379
)

// Defaults of the cluster network, and the files of a cluster's directory.
const (
	DNSDomain      = "cluster.local"
	SpecFile       = "cluster.json"
	KubeconfigFile = "kubeconfig"
)

// Spec is what a local cluster is made of; it is written once at creation.
type Spec struct {
	// Name of the cluster.
	Name string `json:"name"`
	// KubernetesVersion every node runs.
	KubernetesVersion string `json:"kubernetesVersion"`
	// Index chooses the cluster's block of the bridge, 198.18.<Index>.0/24.
	Index int `json:"index"`
	// LoadBalancerIP fronts several control-plane nodes; empty with one.
	LoadBalancerIP string `json:"loadBalancerIP,omitempty"`
	// Nodes of the cluster, control-plane nodes first.
	Nodes []NodeSpec `json:"nodes"`
	// Runtime is what runs the nodes: RuntimeReal (containerd and the real kubelet in nodes of
	// namespaces, booted by kubeadm); empty for a cluster an older slipway made of its node
	// agent's nodes, which this one only deletes.
	Runtime string `json:"runtime,omitempty"`
	// HostRegistries are registries on this host's loopback, besides the local registry, that
	// real nodes pull from and fetch bundles from (TKG_CUSTOM_IMAGE_REPOSITORY's registry): see
	// HostRegistry.
	HostRegistries []string `json:"hostRegistries,omitempty"`
	// Egress are the destinations off the bridge (HOST:PORT, a name or an IPv4 address) real
	// nodes reach through the host: a vCenter and a control-plane endpoint elsewhere, for the
	// infrastructure a bootstrap cluster manages. Each name is resolved on this host as a node
	// is made (ResolveEgress).
	Egress []string `json:"egress,omitempty"`
	// Owner is the Cluster API Cluster (namespace/name, uid) whose machines are this cluster's
	// nodes; empty for a cluster `slipway local cluster create` made. The local infrastructure
	// provider adds and removes the nodes of an owned cluster one machine at a time.
	Owner *Owner `json:"owner,omitempty"`
}

// Owner names the Cluster API Cluster a local cluster belongs to.
type Owner struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	// ManagementCluster is the local cluster whose infrastructure provider made this one;
	// deleting it deletes this one too, as its machines cannot outlive their Cluster API.
	ManagementCluster string `json:"managementCluster,omitempty"`
	// VCenter is set instead for a cluster whose nodes are the VMs of slipway's vCenter
	// simulator at this address: the simulator boots a node when its VM powers on and stops it
	// when the VM powers off or is destroyed. Namespace and UID are unknown to a VM.
	VCenter string `json:"vcenter,omitempty"`
}

// Describe names the owner and how to delete its cluster, for messages.
func (o *Owner) Describe() string {
	if o.VCenter != "" {
		return fmt.Sprintf("Cluster %s, whose nodes are VMs of the vCenter simulator at %s: delete it on its management cluster (`slipway cluster delete %s`)", o.Name, o.VCenter, o.Name)
	}
	return fmt.Sprintf("Cluster %s/%s, which management cluster %s manages: delete it with `slipway cluster delete %s -n %s` there", o.Namespace, o.Name, o.ManagementCluster, o.Name, o.Namespace)
}

// NodeSpec is one node.
type NodeSpec struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// IP is the node's address on the bridge, where its processes listen and Kubernetes shows
	// as its InternalIP.
	IP string `json:"ip"`

	// The fields below are set on the nodes of a cluster the infrastructure provider manages,
	// from the machine's bootstrap data.

	// KubernetesVersion the node runs, when it differs from the cluster's (during an upgrade).
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// ProviderID the node registers with; empty gives local://<cluster>/<node>.
	ProviderID string `json:"providerID,omitempty"`
	// Init says the node's cloud-init runs kubeadm init, making the cluster's first control plane.
	Init bool `json:"init,omitempty"`
	// Join says the node's cloud-init runs kubeadm join --control-plane, adding an etcd member to
	// the running control plane.
	Join bool `json:"join,omitempty"`
}

// NodeVersion returns the Kubernetes version a node runs.
func (s *Spec) NodeVersion(n NodeSpec) string {
	if n.KubernetesVersion != "" {
		return n.KubernetesVersion
	}
	return s.KubernetesVersion
}

// NewOwnedSpec lays out an empty cluster whose nodes the infrastructure provider adds: its
// endpoint is always the load balancer, on 198.18.<index>.1, so that it outlives every machine.
func NewOwnedSpec(name, version string, index int, owner Owner) *Spec {
	return &Spec{Name: name, KubernetesVersion: version, Index: index, Runtime: RuntimeReal, LoadBalancerIP: realAddress(index, 1).String(), Owner: &owner}
}

// AddNode lays out a new node at the lowest free ordinal of the cluster's block (node n on
// 198.18.<index>.<n+1>, as NewSpec lays them out), appends it and returns it. The controller
// manager gives it its pod CIDR.
func (s *Spec) AddNode(name, role string) (NodeSpec, error) {
	if err := ValidateNodeName(name); err != nil {
		return NodeSpec{}, err
	}
	used := map[int]bool{}
	for _, n := range s.Nodes {
		var a, b, c, d int
		if _, err := fmt.Sscanf(n.IP, "%d.%d.%d.%d", &a, &b, &c, &d); err == nil {
			used[d-1] = true
		}
	}
	for ordinal := 1; ordinal < 254; ordinal++ {
		if used[ordinal] {
			continue
		}
		a := realAddress(s.Index, ordinal+1).String()
		n := NodeSpec{Name: name, Role: role, IP: a}
		s.Nodes = append(s.Nodes, n)
		return n, nil
	}
	return NodeSpec{}, fmt.Errorf("cluster %s has no free node address left (253 nodes)", s.Name)
}

// RemoveNode drops a node from the spec.
func (s *Spec) RemoveNode(name string) {
	var kept []NodeSpec
	for _, n := range s.Nodes {
		if n.Name != name {
			kept = append(kept, n)
		}
	}
	s.Nodes = kept
}

// EndpointHost returns the address clients reach the API server at.
func (s *Spec) EndpointHost() string {
	if s.LoadBalancerIP != "" {
		return s.LoadBalancerIP
	}
	return s.ControlPlane()[0].IP
}

// Endpoint returns the API server URL.
func (s *Spec) Endpoint() string {
	return fmt.Sprintf("https://%s", net.JoinHostPort(s.EndpointHost(), fmt.Sprint(APIServerPort)))
}

// NodeNetwork is where the cluster's nodes are: 198.18.<index>.0/24 on the bridge.
func (s *Spec) NodeNetwork() string {
	return netip.PrefixFrom(realAddress(s.Index, 0), 24).String()
}

// ControlPlane returns the control-plane nodes.
func (s *Spec) ControlPlane() []NodeSpec {
	var nodes []NodeSpec
	for _, n := range s.Nodes {
		if n.Role == RoleControlPlane {
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// Node returns the node with the given name.
func (s *Spec) Node(name string) (NodeSpec, bool) {
	for _, n := range s.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return NodeSpec{}, false
}

// NewSpec lays out a cluster, naming the nodes as kind names them (NAME-control-plane,
// NAME-control-plane2, NAME-worker, …): node n (from 1) at 198.18.<index>.<n+1> on the bridge;
// the load balancer of several control-plane nodes at 198.18.<index>.1, an address of the
// host's. The controller manager gives each node its pod CIDR.
func NewSpec(name, version string, index, controlPlanes, workers int) *Spec {
	s := &Spec{Name: name, KubernetesVersion: version, Index: index, Runtime: RuntimeReal}
	if controlPlanes > 1 {
		s.LoadBalancerIP = realAddress(index, 1).String()
	}
	add := func(role, base string, count int) {
		for i := 1; i <= count; i++ {
			nodeName := fmt.Sprintf("%s-%s", name, base)
			if i > 1 {
				nodeName = fmt.Sprintf("%s%d", nodeName, i)
			}
			a := realAddress(index, len(s.Nodes)+2).String()
			s.Nodes = append(s.Nodes, NodeSpec{Name: nodeName, Role: role, IP: a})
		}
	}
	add(RoleControlPlane, "control-plane", controlPlanes)
	add(RoleWorker, "worker", workers)
	return s
}

// Dirs are the paths of one cluster's state.
type Dirs struct {
	// Root is the cluster's directory.
	Root string
}

// Spec returns the path of the cluster's spec.
func (d Dirs) Spec() string { return filepath.Join(d.Root, SpecFile) }

// PKI returns the cluster-wide pki directory (the CAs).
func (d Dirs) PKI() string { return filepath.Join(d.Root, "pki") }

// Kubeconfig returns the path of the administrator kubeconfig.
func (d Dirs) Kubeconfig() string { return filepath.Join(d.Root, KubeconfigFile) }

// Node returns the directory of a node.
func (d Dirs) Node(name string) string { return filepath.Join(d.Root, "nodes", name) }

// NodeLogs returns a node's log directory.
func (d Dirs) NodeLogs(name string) string { return filepath.Join(d.Node(name), "logs") }

// LoadBalancerPID returns the pid file of the load balancer.
func (d Dirs) LoadBalancerPID() string { return filepath.Join(d.Root, "lb.pid") }

// LoadBalancerLog returns the log of the load balancer.
func (d Dirs) LoadBalancerLog() string { return filepath.Join(d.Root, "lb.log") }

// ReadSpec loads a cluster's spec.
func ReadSpec(d Dirs) (*Spec, error) {
	data, err := os.ReadFile(d.Spec())
	if err != nil {
		return nil, err
	}
	var s Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", d.Spec(), err)
	}
	return &s, nil
}

// WriteSpec stores a cluster's spec. It replaces the file in one rename, since the load balancer
// reads it while the infrastructure provider adds nodes.
func WriteSpec(d Dirs, s *Spec) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.Root, 0o700); err != nil {
		return err
	}
	tmp := d.Spec() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, d.Spec())
}
