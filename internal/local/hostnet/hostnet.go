package hostnet

import "net/netip"

// BridgeName is the host's bridge.
const BridgeName = "slipway0"

var (
	// Network is the bridge's range.
	Network = netip.MustParsePrefix("198.18.0.0/15")
	// HostAddress is the host's address on the bridge: the nodes' default gateway, where the
	// host's registry and load balancers answer them.
	HostAddress = netip.MustParseAddr("198.18.0.1")
)
