package hostnet

import (
	"context"
	"io"
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
