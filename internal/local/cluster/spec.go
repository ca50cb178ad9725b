package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Roles of nodes.
const (
	RoleControlPlane = "control-plane"
	RoleWorker       = "worker"
)

// Ports every control-plane node listens on, on its own loopback address.
const (
	APIServerPort = 6443
	EtcdPort      = 2379
	EtcdPeerPort  = 2380
	KubeletPort   = 10250
	KCMPort       = 10257
	SchedulerPort = 10259
)

// Defaults of the cluster network.
const (
	ServiceCIDR    = "10.96.0.0/16"
	ServiceIP      = "10.96.0.1"
	DNSServiceIP   = "10.96.0.10"
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
	// Index chooses the cluster's loopback block 127.<Index>.0.0/16.
	Index int `json:"index"`
	// LoadBalancerIP fronts several control-plane nodes; empty with one.
	LoadBalancerIP string `json:"loadBalancerIP,omitempty"`
	// Nodes of the cluster, control-plane nodes first.
	Nodes []NodeSpec `json:"nodes"`
	// Runtime is what runs the nodes: RuntimeReal for real nodes (containerd and the real kubelet
	// in nodes of namespaces, booted by kubeadm), empty for the node agent.
	Runtime string `json:"runtime,omitempty"`
	// HostRegistries are registries on this host's loopback, besides the local registry, that
	// real nodes pull from and fetch bundles from (TKG_CUSTOM_IMAGE_REPOSITORY's registry): see
	// HostRegistry.
	HostRegistries []string `json:"hostRegistries,omitempty"`
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

// NodeSpec is one node. A node and its pods each have two addresses: a loopback address its
// processes listen on, and the network address Kubernetes shows (Node InternalIP, pod IP), which
// Kubernetes requires not to be loopback. Nothing dials a network address: the API server's
// cluster traffic goes through the node agent's egress proxy, which translates it to loopback.
type NodeSpec struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// IP is the node's loopback address, which its processes listen on.
	IP string `json:"ip"`
	// Address is the node's network address, its InternalIP.
	Address string `json:"address"`
	// PodCIDR is the network range of the node's pods.
	PodCIDR string `json:"podCIDR"`
	// PodLoopbackCIDR is the loopback range the node's pods listen on; the host part of a pod's
	// network address is the host part of its loopback address.
	PodLoopbackCIDR string `json:"podLoopbackCIDR"`

	// The fields below are set on the nodes of a cluster the infrastructure provider manages,
	// from the machine's bootstrap data.

	// KubernetesVersion the node runs, when it differs from the cluster's (during an upgrade).
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// ProviderID the node registers with; empty gives local://<cluster>/<node>.
	ProviderID string `json:"providerID,omitempty"`
	// Init says the node runs kubeadm init's phases once its API server answers: upload the
	// kubeadm and kubelet configuration, bootstrap-token RBAC, kube-proxy and CoreDNS.
	Init bool `json:"init,omitempty"`
	// Join says the control-plane node joins the etcd cluster of the running control plane
	// (kubeadm join --control-plane) instead of starting a new one.
	Join bool `json:"join,omitempty"`
	// Taints the node registers with, as kubeadm's nodeRegistration.taints; nil gives the default
	// (control-plane nodes tainted when the cluster has workers).
	Taints *[]corev1.Taint `json:"taints,omitempty"`
	// Labels the node registers with besides the kubelet's own, as its --node-labels.
	Labels map[string]string `json:"labels,omitempty"`
}

// NodeVersion returns the Kubernetes version a node runs.
func (s *Spec) NodeVersion(n NodeSpec) string {
	if n.KubernetesVersion != "" {
		return n.KubernetesVersion
	}
	return s.KubernetesVersion
}

// NewOwnedSpec lays out an empty cluster whose nodes the infrastructure provider adds, of the
// runtime given (RuntimeReal or the node agent's, ""): its endpoint is always the load balancer,
// on 127.<index>.0.1 or for real nodes on 198.18.<index>.1, so that it outlives every machine.
func NewOwnedSpec(name, version string, index int, owner Owner, runtime string) *Spec {
	s := &Spec{Name: name, KubernetesVersion: version, Index: index, Runtime: runtime, LoadBalancerIP: fmt.Sprintf("127.%d.0.1", index), Owner: &owner}
	if s.Real() {
		s.LoadBalancerIP = realAddress(index, 1).String()
	}
	return s
}

// AddNode lays out a new node at the lowest free ordinal of the cluster's block (node n listens
// on 127.<index>.0.<n+1>, as NewSpec lays them out, or a real node on 198.18.<index>.<n+1>, as
// NewRealSpec does), appends it and returns it.
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
		n := NodeSpec{
			Name:            name,
			Role:            role,
			IP:              fmt.Sprintf("127.%d.0.%d", s.Index, ordinal+1),
			Address:         fmt.Sprintf("172.18.%d.%d", s.Index, ordinal+1),
			PodCIDR:         fmt.Sprintf("10.244.%d.0/24", ordinal),
			PodLoopbackCIDR: fmt.Sprintf("127.%d.%d.0/24", s.Index, ordinal),
		}
		if s.Real() {
			// The controller manager gives a real node its pod CIDR.
			a := realAddress(s.Index, ordinal+1).String()
			n.IP, n.Address, n.PodCIDR, n.PodLoopbackCIDR = a, a, "", ""
		}
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

// NodeNetwork is where the cluster's nodes are: 127.<index>.0.0/16 on loopback, or for real
// nodes 198.18.<index>.0/24 on the bridge.
func (s *Spec) NodeNetwork() string {
	if s.Real() {
		return netip.PrefixFrom(realAddress(s.Index, 0), 24).String()
	}
	return fmt.Sprintf("127.%d.0.0/16", s.Index)
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

// EtcdInitialCluster returns etcd's --initial-cluster value for the control-plane nodes.
func (s *Spec) EtcdInitialCluster() string {
	var members []string
	for _, n := range s.ControlPlane() {
		members = append(members, fmt.Sprintf("%s=https://%s", n.Name, net.JoinHostPort(n.IP, fmt.Sprint(EtcdPeerPort))))
	}
	return strings.Join(members, ",")
}

// Network ranges a local cluster shows, as kind's: nodes in 172.18.<index>.0/24 and pods in
// 10.244.0.0/16, one /24 a node.
const (
	PodSubnet = "10.244.0.0/16"
)

// NewSpec lays out a cluster: node names as kind names them (NAME-control-plane,
// NAME-control-plane2, NAME-worker, …); node n (from 1) listens on 127.<index>.0.<n+1> and shows
// 172.18.<index>.<n+1>; its pods listen in 127.<index>.<n>.0/24 and show 10.244.<n>.0/24; the
// load balancer, with several control-plane nodes, listens on 127.<index>.0.1.
func NewSpec(name, version string, index, controlPlanes, workers int) *Spec {
	s := &Spec{Name: name, KubernetesVersion: version, Index: index}
	if controlPlanes > 1 {
		s.LoadBalancerIP = fmt.Sprintf("127.%d.0.1", index)
	}
	add := func(role, base string, count int) {
		for i := 1; i <= count; i++ {
			nodeName := fmt.Sprintf("%s-%s", name, base)
			if i > 1 {
				nodeName = fmt.Sprintf("%s%d", nodeName, i)
			}
			ordinal := len(s.Nodes) + 1
			s.Nodes = append(s.Nodes, NodeSpec{
				Name:            nodeName,
				Role:            role,
				IP:              fmt.Sprintf("127.%d.0.%d", index, ordinal+1),
				Address:         fmt.Sprintf("172.18.%d.%d", index, ordinal+1),
				PodCIDR:         fmt.Sprintf("10.244.%d.0/24", ordinal),
				PodLoopbackCIDR: fmt.Sprintf("127.%d.%d.0/24", index, ordinal),
			})
		}
	}
	add(RoleControlPlane, "control-plane", controlPlanes)
	add(RoleWorker, "worker", workers)
	return s
}

// Loopback translates an address Kubernetes shows (a node's or a pod's network address) into
// the loopback address that answers for it. It fails for any other address, so that nothing
// of the local runtime ever dials outside loopback.
func (s *Spec) Loopback(ip string) (string, error) {
	addr := net.ParseIP(ip).To4()
	if addr == nil {
		return "", fmt.Errorf("%q is not an IPv4 address", ip)
	}
	for _, n := range s.Nodes {
		if ip == n.Address || ip == n.IP {
			return n.IP, nil
		}
		_, pods, err := net.ParseCIDR(n.PodCIDR)
		if err != nil {
			continue
		}
		if pods.Contains(addr) {
			loop, _, err := net.ParseCIDR(n.PodLoopbackCIDR)
			if err != nil {
				return "", err
			}
			l := loop.To4()
			return fmt.Sprintf("%d.%d.%d.%d", l[0], l[1], l[2], addr[3]), nil
		}
		if _, loops, err := net.ParseCIDR(n.PodLoopbackCIDR); err == nil && loops.Contains(addr) {
			return ip, nil
		}
	}
	return "", fmt.Errorf("%s is neither a node nor a pod of cluster %s", ip, s.Name)
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

// NodePKI returns a node's pki directory in kubeadm's layout.
func (d Dirs) NodePKI(name string) string { return filepath.Join(d.Node(name), "pki") }

// NodeHostLimit returns the file where a node's agent records the last host limit one of its
// processes met.
func (d Dirs) NodeHostLimit(name string) string {
	return filepath.Join(d.Node(name), "host-limit.json")
}

// NodeLogs returns a node's log directory.
func (d Dirs) NodeLogs(name string) string { return filepath.Join(d.Node(name), "logs") }

// NodePID returns the pid file of a node's agent.
func (d Dirs) NodePID(name string) string { return filepath.Join(d.Node(name), "agent.pid") }

// EgressSocket is where a node's agent serves the API server's egress: in the node directory,
// or in the temporary directory, under a name hashed from that path, when the path is longer
// than a socket name may be. Stopping the node removes it.
func (d Dirs) EgressSocket(name string) string {
	path := filepath.Join(d.Node(name), "egress.sock")
	if len(path) < 100 {
		return path
	}
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(os.TempDir(), "slipway-egress-"+hex.EncodeToString(sum[:8])+".sock")
}

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

// WriteSpec stores a cluster's spec. It replaces the file in one rename, since node agents read
// it while the infrastructure provider adds nodes.
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
