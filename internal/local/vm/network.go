package vm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/slipway-dev/slipway/internal/local/hostnet"
	"github.com/slipway-dev/slipway/internal/local/proc"
)

// nodeInterface is the node's end of its veth pair, inside its namespace, on the host-only
// network of package hostnet.
const nodeInterface = "eth0"

// ip runs iproute2's ip with args.
func ip(args ...string) error {
	_, err := proc.Output(context.Background(), nil, "ip", args...)
	return err
}

// bridgeMAC is the bridge's hardware address, set once, locally administered. A Linux bridge
// whose address was never set takes the lowest of its ports' (the nodes' veths), so deleting
// that node changed it, and every other node sent what it sent to the host (its gateway, the
// load balancers, the registry) to the old address until its neighbour entry went stale: 54 s
// in which a cluster's load balancer found its API server unreachable, right after
// management-cluster create deleted the bootstrap cluster's node. Docker sets docker0's for the
// same reason.
const bridgeMAC = "02:73:6c:77:00:01"

// addrAssignSet is /sys/class/net/DEV/addr_assign_type of an address set by a user
// (NET_ADDR_SET), which a bridge keeps whatever its ports.
const addrAssignSet = "3"

// EnsureBridge makes the host's bridge, with the host's address and hardware address (bridgeMAC),
// unless it exists.
func EnsureBridge() error {
	if !linkExists(hostnet.BridgeName) {
		// Another process may make it at the same moment: only its absence after is an error.
		if err := ip("link", "add", hostnet.BridgeName, "type", "bridge"); err != nil && !linkExists(hostnet.BridgeName) {
			return fmt.Errorf("failed to make the bridge %s (the local runtime's nodes need root): %w", hostnet.BridgeName, err)
		}
	}
	// A bridge made before its address was set gets it now, once: the nodes then running
	// learn it as they would after a port's change.
	if assigned, err := os.ReadFile(filepath.Join("/sys/class/net", hostnet.BridgeName, "addr_assign_type")); err != nil || strings.TrimSpace(string(assigned)) != addrAssignSet {
		if err := ip("link", "set", "dev", hostnet.BridgeName, "address", bridgeMAC); err != nil {
			return fmt.Errorf("failed to set the bridge %s's hardware address: %w", hostnet.BridgeName, err)
		}
	}
	if err := ip("addr", "replace", netip.PrefixFrom(hostnet.HostAddress, hostnet.Network.Bits()).String(), "dev", hostnet.BridgeName); err != nil {
		return err
	}
	return ip("link", "set", hostnet.BridgeName, "up")
}

// linkExists says whether the host has a network interface of that name.
func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}

// nodeID names a node's host-side objects: unique for its state directory, so that nodes of two
// stores never share one, and short, since interface names have at most 15 bytes.
func nodeID(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(sum[:6])
}

// namespacePrefix and vethPrefix begin the names of every node's network namespace (and
// cgroup) and of the host's end of its veth.
const (
	namespacePrefix = "slipway-"
	vethPrefix      = "slw"
)

// namespaceName is the name of a node's network namespace under /run/netns, and of its cgroup.
func namespaceName(dir string) string { return namespacePrefix + nodeID(dir) }

// vethName is the host's end of the node's veth pair.
func vethName(dir string) string { return vethPrefix + nodeID(dir) }

// namespacePath is where iproute2 keeps a named network namespace.
func namespacePath(name string) string { return filepath.Join("/run/netns", name) }

// offBridgeRealm is the routing realm of a node's default route, which leads off the bridge:
// the host forwards nothing, so what takes that route would be lost, and a connection to it
// would hang until its timeout. The node refuses it at once instead (offBridgeRules), as a
// network without the route answers. A Service address that kube-proxy has not programmed yet
// takes that route too: an API server calling a webhook whose Service was just made waited the
// webhook's 30 s timeout for it (clusterctl's cert-manager check on a bootstrap cluster).
const offBridgeRealm = "1"

// offBridgeRules are the iptables rules, in the node's filter table, that refuse what the node
// and its pods send by the default route: a TCP reset, an ICMP net-unreachable otherwise. They
// match the realm of the route a packet takes after kube-proxy's DNAT, so a programmed Service
// and the cluster's pod routes are not touched.
func offBridgeRules() [][]string {
	var rules [][]string
	for _, chain := range []string{"OUTPUT", "FORWARD"} {
		match := []string{"-A", chain, "-m", "realm", "--realm", offBridgeRealm, "-m", "comment", "--comment", "slipway: nothing leaves the host"}
		rules = append(rules,
			slices.Concat(match, []string{"-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"}),
			slices.Concat(match, []string{"-j", "REJECT", "--reject-with", "icmp-net-unreachable"}))
	}
	return rules
}

// createNetwork makes the node's network namespace and plugs it into the bridge with address,
// the host as its default gateway, which refuses what would leave the host.
func createNetwork(dir string, address netip.Addr) error {
	ns, veth := namespaceName(dir), vethName(dir)
	if _, err := os.Stat(namespacePath(ns)); err == nil {
		return nil
	}
	cidr := netip.PrefixFrom(address, hostnet.Network.Bits()).String()
	steps := [][]string{
		{"netns", "add", ns},
		{"link", "add", veth, "type", "veth", "peer", "name", nodeInterface, "netns", ns},
		{"link", "set", veth, "master", hostnet.BridgeName, "up"},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "addr", "add", cidr, "dev", nodeInterface},
		{"-n", ns, "link", "set", nodeInterface, "up"},
		{"-n", ns, "route", "add", "default", "via", hostnet.HostAddress.String(), "realm", offBridgeRealm},
	}
	for _, r := range offBridgeRules() {
		steps = append(steps, slices.Concat([]string{"netns", "exec", ns, "iptables", "--wait"}, r))
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			_ = deleteNetwork(dir)
			return fmt.Errorf("failed to make the network of the node in %s: %w", dir, err)
		}
	}
	return nil
}

// deleteNetwork removes the node's veth pair and its network namespace.
func deleteNetwork(dir string) error {
	// The kernel destroys a namespace, and the veth in it, only once nothing holds it, later:
	// the host's end is deleted first, which takes the pair with it at once.
	if linkExists(vethName(dir)) {
		if err := ip("link", "del", vethName(dir)); err != nil {
			return err
		}
	}
	ns := namespaceName(dir)
	if _, err := os.Stat(namespacePath(ns)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return ip("netns", "del", ns)
}

// UsedAddresses returns the bridge addresses the host's nodes hold (every node of every store on
// this host, found by its network namespace) and the host's own on the bridge, its load
// balancers'.
func UsedAddresses() ([]netip.Addr, error) {
	namespaces, err := nodeNamespaces()
	if err != nil {
		return nil, err
	}
	var used []netip.Addr
	for _, ns := range namespaces {
		addrs, err := namespaceAddresses(ns)
		if err != nil {
			continue // a namespace being made or deleted
		}
		used = append(used, addrs...)
	}
	own, err := hostAddresses()
	return append(used, own...), err
}

// nodeNamespaces returns the network namespaces of every node on this host, by name.
func nodeNamespaces() ([]string, error) {
	entries, err := os.ReadDir("/run/netns")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), namespacePrefix) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// namespaceAddresses returns the addresses of a node's interface on the bridge.
func namespaceAddresses(ns string) ([]netip.Addr, error) {
	out, err := proc.Output(context.Background(), nil, "ip", "-n", ns, "-4", "-o", "addr", "show", "dev", nodeInterface)
	if err != nil {
		return nil, err
	}
	return addressesOf(string(out)), nil
}

// hostAddresses returns the host's addresses on the bridge; none when it does not exist.
func hostAddresses() ([]netip.Addr, error) {
	if !linkExists(hostnet.BridgeName) {
		return nil, nil
	}
	out, err := proc.Output(context.Background(), nil, "ip", "-4", "-o", "addr", "show", "dev", hostnet.BridgeName)
	if err != nil {
		return nil, err
	}
	return addressesOf(string(out)), nil
}

// addressesOf reads the addresses of `ip -o addr show` lines ("2: eth0    inet 198.18.1.2/15 …").
func addressesOf(out string) []netip.Addr {
	var addrs []netip.Addr
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		for i, f := range fields {
			if f != "inet" || i+1 >= len(fields) {
				continue
			}
			if p, err := netip.ParsePrefix(fields[i+1]); err == nil {
				addrs = append(addrs, p.Addr())
			}
		}
	}
	return addrs
}

// AddHostAddress gives the host another address on the bridge, where a cluster's load balancer
// answers its nodes and the host's clients.
func AddHostAddress(addr netip.Addr) error {
	if !hostnet.Network.Contains(addr) {
		return fmt.Errorf("%s is not on the bridge's network %s", addr, hostnet.Network)
	}
	if err := EnsureBridge(); err != nil {
		return err
	}
	return ip("addr", "replace", netip.PrefixFrom(addr, 32).String(), "dev", hostnet.BridgeName)
}

// RemoveHostAddress takes an address AddHostAddress gave back from the host.
func RemoveHostAddress(addr netip.Addr) error {
	own, err := hostAddresses()
	if err != nil || !slices.Contains(own, addr) {
		return err
	}
	return ip("addr", "del", netip.PrefixFrom(addr, 32).String(), "dev", hostnet.BridgeName)
}
