package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/local/hostnet"
	"github.com/slipway-dev/slipway/internal/local/registry"
	"github.com/slipway-dev/slipway/internal/local/vm"
	"github.com/slipway-dev/slipway/internal/pki"
	"github.com/slipway-dev/slipway/internal/progress"
)

// RuntimeReal is Spec.Runtime of every cluster: nodes of namespaces (package vm) running
// containerd and the real kubelet, booted by kubeadm. An empty Runtime is a cluster an older
// slipway made of its node agent's nodes, which this one only deletes.
const RuntimeReal = "real"

// Real says whether the cluster's nodes are nodes of namespaces, not an older slipway's node
// agent's.
func (s *Spec) Real() bool { return s.Runtime == RuntimeReal }

// realAddress is host address h of a cluster's block on the bridge, 198.18.<index>.<h>. Block 0
// is the host's.
func realAddress(index, h int) netip.Addr {
	a := hostnet.Network.Addr().As4()
	return netip.AddrFrom4([4]byte{a[0], a[1], byte(index), byte(h)})
}

// realBlock returns the index of the cluster block an address of the bridge is in.
func realBlock(a netip.Addr) (int, bool) {
	if !a.Is4() {
		return 0, false
	}
	b, net := a.As4(), hostnet.Network.Addr().As4()
	return int(b[2]), b[0] == net[0] && b[1] == net[1]
}

// realBlocksInUse returns the indexes of the bridge blocks that nodes or load balancers of any
// store on this host hold.
func realBlocksInUse() (map[int]bool, error) {
	addrs, err := vm.UsedAddresses()
	if err != nil {
		return nil, err
	}
	used := map[int]bool{}
	for _, a := range addrs {
		if index, ok := realBlock(a); ok {
			used[index] = true
		}
	}
	return used, nil
}

// nodeHostCommands are what a real node runs from the host, as a VM runs them from its image.
var nodeHostCommands = map[string]string{
	"containerd": "containerd", "runc": "runc", "nsenter": "util-linux", "ip": "iproute2",
	"iptables": "iptables", "conntrack": "conntrack",
}

// cniPlugins is where Debian's containernetworking-plugins puts the plugins the pod network uses.
const cniPlugins = "/usr/lib/cni"

// LocalRegistry returns the address of the local registry that `slipway local registry start`
// (and so `make images`) runs beside this store, which real nodes pull from.
func (s Store) LocalRegistry() (string, error) {
	addr, ok := registry.Daemon{Dir: filepath.Join(filepath.Dir(s.Root), "registry")}.Address()
	if !ok {
		return "", errors.New("the local registry, which real nodes pull Kubernetes' images from, does not run: `make images` starts it and pushes them (or `slipway local registry start`)")
	}
	return addr, nil
}

// NodesNeedRoot is why real nodes cannot be made without root, and the way out; a caller
// adds its own other way.
const NodesNeedRoot = "real nodes are made of namespaces, cgroups and a bridge: run slipway as root"

// EnsureNodeImage checks what a real node of this Kubernetes version needs: root, the host's
// packages, the kubelet and kubeadm built by `make assets`, and the release's images in the local
// registry, which the nodes pull from. It returns the registry's address.
func (s Store) EnsureNodeImage(ctx context.Context, version string) (string, error) {
	if os.Geteuid() != 0 {
		return "", errors.New(NodesNeedRoot)
	}
	var missing []string
	for cmd, pkg := range nodeHostCommands {
		if _, err := exec.LookPath(cmd); err != nil {
			missing = append(missing, pkg)
		}
	}
	for _, plugin := range []string{"bridge", "host-local", "portmap", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniPlugins, plugin)); err != nil {
			missing = append(missing, "containernetworking-plugins")
			break
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return "", fmt.Errorf("a real node needs the host's %s: apt-get install %s", strings.Join(missing, ", "), strings.Join(missing, " "))
	}
	set, err := assets.Find()
	if err != nil {
		return "", err
	}
	for _, bin := range []string{"kubelet", "kubeadm"} {
		if _, err := set.Kubernetes(version, bin); err != nil {
			return "", err
		}
	}
	release, err := assets.ReleaseOf(version)
	if err != nil {
		return "", err
	}
	addr, err := s.LocalRegistry()
	if err != nil {
		return "", err
	}
	url := fmt.Sprintf("http://%s/v2/tkg/pause/manifests/%s", addr, release.PauseTag)
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return "", fmt.Errorf("the local registry at %s does not answer: %w", addr, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the local registry at %s has no %s (%s): run `make images`, which pushes Kubernetes' images there", addr, release.PauseImage(), resp.Status)
	}
	return addr, nil
}

// registryMirrors are the registries a real node pulls from through the local registry at addr,
// on the host's bridge address: the ones slipway's images are named by, and the local registry's
// own loopback names, so that an image pushed to 127.0.0.1:5000/app:v1 runs as
// 127.0.0.1:5000/app:v1 (kind's local-registry convention). Each of hostRegistries, on the
// host's loopback too, is served by itself on the bridge address.
func registryMirrors(addr string, hostRegistries []string) map[string]string {
	url := bridgeURL(addr)
	_, port, _ := net.SplitHostPort(addr)
	mirrors := map[string]string{addr: url, "localhost:" + port: url}
	for _, host := range []string{"projects.registry.vmware.com", "ghcr.io", "registry.k8s.io", "docker.io", "quay.io"} {
		mirrors[host] = url
	}
	for _, r := range hostRegistries {
		mirrors[r] = bridgeURL(r)
	}
	return mirrors
}

// bridgeURL is where a node reaches the registry at a loopback address of this host: the same
// port on the host's bridge address.
func bridgeURL(loopback string) string { return "http://" + vm.BridgeAddress(loopback) }

// HostRegistry returns the registry of repository (the value of variable, a registry path such
// as TKG_CUSTOM_IMAGE_REPOSITORY's) when it is one real nodes can pull from besides the local
// registry: one on this host's IPv4 loopback with its port (127.0.0.1:PORT or localhost:PORT),
// which a node reaches on the same port of the host's bridge address, as it reaches the local
// registry. It returns "" for an empty repository, and an error naming the variable for a
// registry elsewhere, which no real node reaches (every packet of a node stays on this host);
// the caller adds its own way out.
func HostRegistry(variable, repository string) (string, error) {
	if repository == "" {
		return "", nil
	}
	host, _, _ := strings.Cut(repository, "/")
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = host, ""
	}
	if ip := net.ParseIP(name); name != "localhost" && (ip == nil || ip.To4() == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("%s %s: its registry %s is not on this host's IPv4 loopback, and a real node reaches no registry off this host: "+
			"serve the copy from a registry here, listening on 127.0.0.1:PORT and on the bridge address %s (or on 0.0.0.0)",
			variable, repository, host, hostnet.HostAddress)
	}
	if port == "" {
		return "", fmt.Errorf("%s %s: name the port of the registry on this host's loopback (%s:PORT), which a real node reaches on that port of the bridge address %s",
			variable, repository, name, hostnet.HostAddress)
	}
	return host, nil
}

// CheckHostRegistries checks that each registry of this host's loopback that real nodes will
// pull from (HostRegistry's, named by variable) answers on the host's bridge address too, where
// the nodes reach it. It makes the bridge when there is none yet, as the first node would.
func CheckHostRegistries(variable string, registries []string) error {
	if len(registries) == 0 {
		return nil
	}
	if err := vm.EnsureBridge(); err != nil {
		return err
	}
	for _, r := range registries {
		target := vm.BridgeAddress(r)
		conn, err := net.DialTimeout("tcp", target, 3*time.Second)
		if err != nil {
			return fmt.Errorf("%s: the registry %s does not answer at %s, where real nodes reach it: make it listen on the bridge address %s too (or on 0.0.0.0), or unset %s: %w",
				variable, r, target, hostnet.HostAddress, variable, err)
		}
		conn.Close()
	}
	return nil
}

// prepareNodes writes every node's state: its spec and cloud-init, its network namespace
// and cgroups, and the CAs of the control-plane nodes.
func prepareNodes(dirs Dirs, spec *Spec, cas *pki.CAs, registryAddr string) error {
	b, err := newBootstrap(cas)
	if err != nil {
		return err
	}
	for _, n := range spec.Nodes {
		data, err := userData(spec, n, b)
		if err != nil {
			return err
		}
		if n.Role == RoleControlPlane {
			if err := cas.Write(vm.RootPath(dirs.Node(n.Name), "/etc/kubernetes/pki")); err != nil {
				return err
			}
		}
		if err := PrepareNodeState(dirs, spec, n, "", []byte(data), registryAddr); err != nil {
			return err
		}
	}
	return nil
}

// PrepareNodeState writes the state of a node the infrastructure provider adds to a cluster of
// real nodes from its machine's bootstrap data (userData, executed as it is when the node boots),
// and makes its network namespace and cgroups; the machine's providerID is the node's. The
// node's Kubernetes version chooses its kubelet, kubeadm and pause image.
func PrepareNodeState(dirs Dirs, spec *Spec, node NodeSpec, providerID string, userData []byte, registryAddr string) error {
	release, err := assets.ReleaseOf(spec.NodeVersion(node))
	if err != nil {
		return err
	}
	set, err := assets.Find()
	if err != nil {
		return err
	}
	kubelet, err := set.Kubernetes(release.Version, "kubelet")
	if err != nil {
		return err
	}
	egress, names, err := ResolveEgress(spec.Egress)
	if err != nil {
		return err
	}
	vs := vm.Spec{Name: node.Name, Address: netip.MustParseAddr(node.IP), BinDir: filepath.Dir(kubelet),
		SandboxImage: release.PauseImage(), Mirrors: registryMirrors(registryAddr, spec.HostRegistries), ProviderID: providerID, LoopbackRegistry: registryAddr,
		HostRegistries: spec.HostRegistries, Egress: egress, EgressNames: names,
		NodeServiceDir: storeOf(dirs).NodeServiceDir()}
	if err := vm.Create(dirs.Node(node.Name), vs, userData); err != nil {
		return fmt.Errorf("failed to make node %s: %w", node.Name, err)
	}
	return nil
}

// lookupIPv4 resolves a name of an egress destination on this host; tests replace it.
var lookupIPv4 = func(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip4", host)
}

// ResolveEgress resolves egress destinations (HOST:PORT) on this host, into every IPv4 address
// of a name, and checks each (vm.CheckEgress). It returns the addresses and ports, and the names
// with their addresses (lower case), which the nodes answer to their pods. A name's address on
// the bridge (the vCenter simulator's, by a name) is answered but is no destination: the nodes
// reach it directly.
func ResolveEgress(destinations []string) ([]netip.AddrPort, map[string][]netip.Addr, error) {
	var out []netip.AddrPort
	var names map[string][]netip.Addr
	for _, d := range destinations {
		host, port, err := net.SplitHostPort(d)
		if err != nil {
			return nil, nil, fmt.Errorf("egress destination %q is not HOST:PORT: %w", d, err)
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil || p == 0 {
			return nil, nil, fmt.Errorf("egress destination %q: port %q is not a port number", d, port)
		}
		var addrs []netip.Addr
		named := false
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a.Unmap()}
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			ips, err := lookupIPv4(ctx, host)
			cancel()
			if err != nil {
				return nil, nil, fmt.Errorf("egress destination %q: %w (the nodes reach IPv4 addresses only)", d, err)
			}
			for _, ip := range ips {
				addrs = append(addrs, ip.Unmap())
			}
			if names == nil {
				names = map[string][]netip.Addr{}
			}
			names[strings.ToLower(strings.TrimSuffix(host, "."))] = addrs
			named = true
		}
		for _, a := range addrs {
			ap := netip.AddrPortFrom(a, uint16(p))
			if named && hostnet.Network.Contains(a) {
				continue
			}
			if err := vm.CheckEgress(ap); err != nil {
				return nil, nil, fmt.Errorf("%w (from %q)", err, d)
			}
			if !slices.Contains(out, ap) {
				out = append(out, ap)
			}
		}
	}
	return out, names, nil
}

// startNodes starts the load balancer and the nodes of a cluster of real nodes that do not
// run, and returns the nodes it started.
func startNodes(dirs Dirs, spec *Spec, nodes []NodeSpec, exe string) ([]NodeSpec, error) {
	if _, err := storeOf(dirs).EnsureNodeService(exe); err != nil {
		return nil, err
	}
	if spec.LoadBalancerIP != "" {
		if _, err := StartLoadBalancerIn(dirs, exe); err != nil {
			return nil, err
		}
	}
	var started []NodeSpec
	for _, n := range nodes {
		didStart, err := startRealNode(dirs.Node(n.Name), exe)
		if err != nil {
			return nil, err
		}
		if didStart {
			started = append(started, n)
		}
	}
	return started, nil
}

// storeOf is the store a cluster's directories are in.
func storeOf(dirs Dirs) Store { return Store{Root: filepath.Dir(dirs.Root)} }

// startRealNode starts a real node unless it runs, and says whether it started it.
func startRealNode(dir, exe string) (bool, error) {
	before, _ := vm.Running(dir)
	pid, err := vm.Start(dir, exe)
	if err != nil {
		return false, fmt.Errorf("failed to start node %s: %w", filepath.Base(dir), err)
	}
	return pid != before, nil
}

// waitForBoot waits until the nodes executed their cloud-init (kubeadm init or join), and fails
// at once, naming the node's log, when one failed.
func waitForBoot(ctx context.Context, dirs Dirs, nodes []NodeSpec, timeout time.Duration) error {
	var pending []string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		pending = nil
		for _, n := range nodes {
			dir := dirs.Node(n.Name)
			status, ok := vm.Booted(dir)
			switch {
			case !ok:
				pending = append(pending, n.Name)
			case status != "finished":
				return false, bootFailed(dir, n.Name, status)
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil && len(pending) > 0 {
		return fmt.Errorf("nodes %s did not finish kubeadm within %s (logs: %s): %w", strings.Join(pending, ", "), timeout, dirs.Node(pending[0]), err)
	}
	return err
}

// bootLogLines is how much of a failed node's cloud-init log its error carries.
const bootLogLines = 20

// bootFailed is the error of a node whose cloud-init failed. It carries the log's last lines, as
// kind's error carries a failed command's output: the create that fails deletes the node, and
// the log with it, unless it is told to retain them.
func bootFailed(dir, node, status string) error {
	const log = "cloud-init-output.log"
	tail := vm.LogTail(dir, log, bootLogLines)
	if tail == "" {
		return fmt.Errorf("node %s did not boot: cloud-init %s, and its log %s is empty", node, status, vm.LogPath(dir, log))
	}
	return fmt.Errorf("node %s did not boot: cloud-init %s; the last lines of its log %s:\n%s", node, status, vm.LogPath(dir, log), strings.TrimRight(indent(tail+"\n", "    "), "\n"))
}

// deleteRealNodes powers off and removes every node of a cluster of real nodes, and takes its
// load balancer's address back from the host.
func deleteRealNodes(dirs Dirs, spec *Spec) error {
	var errs []error
	for _, n := range spec.Nodes {
		dir := dirs.Node(n.Name)
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := vm.Delete(dir); err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// nodeSteps boot a new cluster's real nodes in kind's order: the first control-plane node
// (kubeadm init, which also applies the runtime's pod network), then the other control-plane
// nodes one at a time (kubeadm join --control-plane adds an etcd member each), then the workers
// together.
func (b *boot) nodeSteps() []progress.NamedStep {
	cps := b.spec.ControlPlane()
	steps := []progress.NamedStep{
		{Name: "Starting control-plane 🕹️", Run: func(ctx context.Context) error {
			for i, n := range cps {
				if _, err := startNodes(b.dirs, b.spec, []NodeSpec{n}, b.exe); err != nil {
					return err
				}
				if err := waitForBoot(ctx, b.dirs, []NodeSpec{n}, 4*time.Minute); err != nil {
					return err
				}
				if i == 0 {
					if err := waitForAPI(ctx, b.cfg, 2*time.Minute); err != nil {
						return fmt.Errorf("the API server did not become ready: %w (logs: %s)", err, b.dirs.NodeLogs(n.Name))
					}
				}
			}
			return nil
		}},
		{Name: "Installing CNI 🔌", Run: func(ctx context.Context) error {
			cs, err := kubernetes.NewForConfig(b.cfg)
			if err != nil {
				return err
			}
			// The control-plane node applies the pod network when its API server answers.
			err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
				_, err := cs.AppsV1().DaemonSets(metav1.NamespaceSystem).Get(ctx, podNetworkName, metav1.GetOptions{})
				return err == nil, nil
			})
			if err != nil {
				return fmt.Errorf("the pod network was not applied: %w (log: %s)", err, vm.LogPath(b.dirs.Node(cps[0].Name), "boot.log"))
			}
			return nil
		}},
		{Name: "Installing StorageClass 💾", Run: func(ctx context.Context) error { return b.apply(ctx, ManifestStorage, ManifestLocalPath) }},
	}
	workers := b.workers()
	if len(workers) == 0 {
		return steps
	}
	return append(steps, progress.NamedStep{Name: "Joining worker nodes 🚜", Run: func(ctx context.Context) error {
		if _, err := startNodes(b.dirs, b.spec, workers, b.exe); err != nil {
			return err
		}
		if err := waitForBoot(ctx, b.dirs, workers, 4*time.Minute); err != nil {
			return err
		}
		return waitForNodes(ctx, b.cfg, b.spec.Nodes, b.start, 3*time.Minute)
	}})
}

// podNetworkName is the runtime's pod network DaemonSet (internal/local/podnet/pod-network.yaml).
const podNetworkName = "local-pod-network"

// Unreached returns the destinations (HOST:PORT, as ResolveEgress takes them) that the
// cluster's nodes cannot reach: those not among its egress. One given as it is in the egress is
// reached. A name is reached only when it is one of the egress's names, which the nodes answer
// (they have no other resolver), and each of its addresses off the bridge is among the egress's.
func (s *Spec) Unreached(destinations []string) ([]string, error) {
	have, names, err := ResolveEgress(s.Egress)
	if err != nil {
		return nil, fmt.Errorf("local cluster %s: %w", s.Name, err)
	}
	var out []string
	for _, d := range destinations {
		if slices.Contains(s.Egress, d) {
			continue
		}
		want, _, err := ResolveEgress([]string{d})
		if err != nil {
			return nil, err
		}
		reached := true
		if host, _, _ := net.SplitHostPort(d); !isAddress(host) {
			_, reached = names[strings.ToLower(strings.TrimSuffix(host, "."))]
		}
		for _, ap := range want {
			reached = reached && slices.Contains(have, ap)
		}
		if !reached {
			out = append(out, d)
		}
	}
	return out, nil
}

// isAddress says whether a destination's host is an IP address rather than a name.
func isAddress(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}
