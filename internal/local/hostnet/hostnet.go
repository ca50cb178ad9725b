package hostnet

import (
	"context"
	"io"
	"net"
	"net/netip"
)

// BridgeName is the host's bridge.
const BridgeName = "slipway0"

var (
	// Network is the bridge's range.
	Network = netip.MustParsePrefix("198.18.0.0/15")
	// HostAddress is the host's address on the bridge: the nodes' default gateway, where the
	// host's registry and load balancers answer them.
	HostAddress = netip.MustParseAddr("198.18.0.1")
	// EndpointBlock holds the addresses of the host's on the bridge that control-plane
	// endpoints chosen by a user take (the vCenter simulator's clusters' virtual IPs): no local
	// cluster is given this block.
	EndpointBlock = netip.MustParsePrefix("198.18.255.0/24")
)

// Reaches says whether a node of the runtime reaches address (a host, or HOST:PORT): only an
// address on the bridge does, since the host routes nothing off it.
func Reaches(address string) bool {
	host := address
	if h, _, err := net.SplitHostPort(address); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && Network.Contains(ip)
}

// Splice copies a and b to each other until either side ends or the context does, as a TCP
// proxy of the runtime (a load balancer, a node's forward of the local registry) joins a client
// to its backend. The caller closes both.
func Splice(ctx context.Context, a, b io.ReadWriter) {
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(a, b); done <- struct{}{} }()
	go func() { _, _ = io.Copy(b, a); done <- struct{}{} }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
