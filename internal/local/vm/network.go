package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The host-only network every node sits on. 198.18.0.0/15 is reserved for benchmarking
// (RFC 2544): it collides with no private range (10/8, 172.16/12, 192.168/16) nor with TKG's
// default cluster and service CIDRs (100.96.0.0/11, 100.64.0.0/13). The host has the first
// address; it does not forward (no NAT, no route off the host), so every packet stays here.
const (
	// BridgeName is the host's bridge.
	BridgeName = "slipway0"
	// nodeInterface is the node's end of its veth pair, inside its namespace.
	nodeInterface = "eth0"
)

var (
	// Network is the bridge's range.
	Network = netip.MustParsePrefix("198.18.0.0/15")
	// HostAddress is the host's address on the bridge: the nodes' default gateway, where the
	// host's registry and load balancers answer them.
	HostAddress = netip.MustParseAddr("198.18.0.1")
)

// ip runs iproute2's ip with args.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// EnsureBridge makes the host's bridge, with the host's address, unless it exists.
func EnsureBridge() error {
	if _, err := os.Stat(filepath.Join("/sys/class/net", BridgeName)); errors.Is(err, os.ErrNotExist) {
		if err := ip("link", "add", BridgeName, "type", "bridge"); err != nil {
			return fmt.Errorf("failed to make the bridge %s (the local runtime's nodes need root): %w", BridgeName, err)
		}
	}
	if err := ip("addr", "replace", netip.PrefixFrom(HostAddress, Network.Bits()).String(), "dev", BridgeName); err != nil {
		return err
	}
	return ip("link", "set", BridgeName, "up")
}

// nodeID names a node's host-side objects: unique for its state directory, so that nodes of two
// stores never share one, and short, since interface names have at most 15 bytes.
func nodeID(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(sum[:6])
}

// namespaceName is the name of a node's network namespace under /run/netns, and of its cgroup.
func namespaceName(dir string) string { return "slipway-" + nodeID(dir) }

// vethName is the host's end of the node's veth pair.
func vethName(dir string) string { return "slw" + nodeID(dir) }

// namespacePath is where iproute2 keeps a named network namespace.
func namespacePath(name string) string { return filepath.Join("/run/netns", name) }

// createNetwork makes the node's network namespace and plugs it into the bridge with address,
// the host as its default gateway.
func createNetwork(dir string, address netip.Addr) error {
	ns, veth := namespaceName(dir), vethName(dir)
	if _, err := os.Stat(namespacePath(ns)); err == nil {
		return nil
	}
	cidr := netip.PrefixFrom(address, Network.Bits()).String()
	steps := [][]string{
		{"netns", "add", ns},
		{"link", "add", veth, "type", "veth", "peer", "name", nodeInterface, "netns", ns},
		{"link", "set", veth, "master", BridgeName, "up"},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "addr", "add", cidr, "dev", nodeInterface},
		{"-n", ns, "link", "set", nodeInterface, "up"},
		{"-n", ns, "route", "add", "default", "via", HostAddress.String()},
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			_ = deleteNetwork(dir)
			return fmt.Errorf("failed to make the network of the node in %s: %w", dir, err)
		}
	}
	return nil
}

// deleteNetwork removes the node's network namespace; its veth pair goes with it.
func deleteNetwork(dir string) error {
	ns := namespaceName(dir)
	if _, err := os.Stat(namespacePath(ns)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return ip("netns", "del", ns)
}
