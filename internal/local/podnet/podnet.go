package podnet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
)

const (
	// ConfigFile is the CNI configuration the network writes in the node's CNI directory.
	ConfigFile = "10-slipway.conflist"
	// routeProtocol marks the routes the network adds, so that it finds and removes its own only.
	routeProtocol = "199"
	// masqueradeChain is the nat chain that masquerades the pods' traffic leaving the cluster.
	masqueradeChain = "SLIPWAY-POD-NETWORK"
	// bridgeName is the bridge inside the node that the node's pods are attached to.
	bridgeName = "cni0"
	// syncEvery is how often the network reads the cluster's Nodes.
	syncEvery = 3 * time.Second
)

// Network programs one node.
type Network struct {
	Client   kubernetes.Interface
	NodeName string
	// CNIDir is the node's CNI configuration directory.
	CNIDir string
	// Exec runs one of the node's networking commands (ip, iptables-restore) with its input:
	// proc.Output.
	Exec func(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error)
	// masquerade is the chain last written, not written again while it is the same.
	masquerade string
}

// Run syncs the node every few seconds until the context ends.
func (n *Network) Run(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithValues("Node", n.NodeName)
	var last string
	for {
		err := n.Sync(ctx)
		if msg := fmt.Sprint(err); err != nil && msg != last {
			log.Error(err, "Cannot program the node's pod network; retrying")
		}
		last = fmt.Sprint(err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(syncEvery):
		}
	}
}

// peer is another node: its pod CIDRs and its address on the bridge.
type peer struct {
	cidrs   []netip.Prefix
	address netip.Addr
}

// Sync writes the node's CNI configuration once the node has a pod CIDR, routes to the other
// nodes' pod CIDRs and removes routes to nodes that are gone, and masquerades what leaves them.
func (n *Network) Sync(ctx context.Context) error {
	nodes, err := n.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("failed to list Nodes: %w", err)
	}
	var own []netip.Prefix
	var peers []peer
	for _, node := range nodes.Items {
		cidrs := podCIDRs(&node)
		if node.Name == n.NodeName {
			own = cidrs
			continue
		}
		if address, ok := internalIP(&node); ok && len(cidrs) > 0 {
			peers = append(peers, peer{cidrs: cidrs, address: address})
		}
	}
	if len(own) == 0 {
		return fmt.Errorf("node %s has no pod CIDR yet (the controller manager allocates it with --allocate-node-cidrs)", n.NodeName)
	}
	if err := n.writeConfig(own); err != nil {
		return err
	}
	if err := n.syncRoutes(ctx, peers); err != nil {
		return err
	}
	return n.syncMasquerade(ctx, own, peers)
}

func podCIDRs(node *corev1.Node) []netip.Prefix {
	texts := node.Spec.PodCIDRs
	if len(texts) == 0 && node.Spec.PodCIDR != "" {
		texts = []string{node.Spec.PodCIDR}
	}
	var out []netip.Prefix
	for _, t := range texts {
		if p, err := netip.ParsePrefix(t); err == nil && p.Addr().Is4() {
			out = append(out, p.Masked())
		}
	}
	return out
}

func internalIP(node *corev1.Node) (netip.Addr, bool) {
	for _, a := range node.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if addr, err := netip.ParseAddr(a.Address); err == nil && addr.Is4() {
			return addr, true
		}
	}
	return netip.Addr{}, false
}

// Config is the CNI configuration of a node whose pods take addresses from cidrs: a bridge in
// the node, its gateway the first address of the range, host-local addresses, and portmap for
// hostPort. The bridge plugin does not masquerade: the network does, for the whole cluster.
func Config(cidrs []netip.Prefix) ([]byte, error) {
	var ranges [][]map[string]string
	for _, c := range cidrs {
		ranges = append(ranges, []map[string]string{{"subnet": c.String()}})
	}
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "slipway",
		"plugins": []map[string]any{
			{
				"type": "bridge", "bridge": bridgeName, "isGateway": true, "ipMasq": false, "hairpinMode": true,
				"ipam": map[string]any{"type": "host-local", "ranges": ranges, "routes": []map[string]string{{"dst": "0.0.0.0/0"}}},
			},
			{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	return json.MarshalIndent(conf, "", "  ")
}

// writeConfig writes the configuration when it changed, through a rename, so that the kubelet
// never reads half of it.
func (n *Network) writeConfig(cidrs []netip.Prefix) error {
	data, err := Config(cidrs)
	if err != nil {
		return err
	}
	path := filepath.Join(n.CNIDir, ConfigFile)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(n.CNIDir, 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// syncRoutes makes the node's routes of the network's protocol exactly the peers' pod CIDRs.
func (n *Network) syncRoutes(ctx context.Context, peers []peer) error {
	want := map[string]string{}
	for _, p := range peers {
		for _, c := range p.cidrs {
			want[c.String()] = p.address.String()
		}
	}
	out, err := n.Exec(ctx, nil, "ip", "-4", "route", "show", "proto", routeProtocol)
	if err != nil {
		return err
	}
	have := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		// "100.96.1.0/24 via 198.18.0.3 dev eth0 "
		f := strings.Fields(line)
		if len(f) >= 3 && f[1] == "via" {
			have[f[0]] = f[2]
		}
	}
	for cidr := range have {
		if _, ok := want[cidr]; !ok {
			if _, err := n.Exec(ctx, nil, "ip", "-4", "route", "del", cidr, "proto", routeProtocol); err != nil {
				return err
			}
		}
	}
	for cidr, via := range want {
		if have[cidr] == via {
			continue
		}
		if _, err := n.Exec(ctx, nil, "ip", "-4", "route", "replace", cidr, "via", via, "proto", routeProtocol); err != nil {
			return err
		}
	}
	return nil
}

// syncMasquerade rewrites the network's nat chain: what the node's pods send to any pod CIDR of
// the cluster keeps its source, what they send elsewhere leaves with the node's address. The
// chain is whole on every sync, so a pod CIDR that changed leaves nothing behind; POSTROUTING's
// one jump to it never changes.
func (n *Network) syncMasquerade(ctx context.Context, own []netip.Prefix, peers []peer) error {
	var cluster []string
	for _, c := range own {
		cluster = append(cluster, c.String())
	}
	for _, p := range peers {
		for _, c := range p.cidrs {
			cluster = append(cluster, c.String())
		}
	}
	sort.Strings(cluster)
	cluster = slices.Compact(cluster)
	var b strings.Builder
	b.WriteString("*nat\n:" + masqueradeChain + " - [0:0]\n")
	for _, c := range cluster {
		fmt.Fprintf(&b, "-A %s -d %s -j RETURN\n", masqueradeChain, c)
	}
	for _, c := range own {
		fmt.Fprintf(&b, "-A %s -s %s -j MASQUERADE\n", masqueradeChain, c)
	}
	b.WriteString("COMMIT\n")
	if b.String() != n.masquerade {
		if _, err := n.Exec(ctx, []byte(b.String()), "iptables-restore", "--noflush", "--wait"); err != nil {
			return err
		}
		n.masquerade = b.String()
	}
	jump := []string{"POSTROUTING", "-m", "comment", "--comment", "slipway pod network: masquerade what leaves the cluster's pods", "-j", masqueradeChain}
	if _, err := n.Exec(ctx, nil, "iptables", append([]string{"--wait", "-t", "nat", "-C"}, jump...)...); err == nil {
		return nil
	}
	_, err := n.Exec(ctx, nil, "iptables", append([]string{"--wait", "-t", "nat", "-A"}, jump...)...)
	return err
}
