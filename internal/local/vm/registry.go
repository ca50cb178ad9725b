package vm

import (
	"context"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/local/hostnet"
)

// forwardRegistry makes a registry on the host's loopback (the local registry, 127.0.0.1:5000, or
// a copy the custom image repository names) answer in the node's network namespace too, by
// forwarding its connections to the same port of the host's bridge address, where the registry
// answers as well: what names the registry by its loopback address (the package repository's
// bundles, which kapp-controller fetches from a host-network pod) works on the node as it does
// on the host. A registry named localhost:PORT is answered on 127.0.0.1:PORT. It returns when the
// context ends.
func forwardRegistry(ctx context.Context, loopback string) {
	log := ctrl.LoggerFrom(ctx).WithValues("registry", loopback)
	addr, ok := loopbackAddress(loopback)
	if !ok {
		log.Info("Not forwarding the registry: its address is not a loopback address and port")
		return
	}
	target := BridgeAddress(loopback)
	l, ok := listenUntilDone(ctx, log, func() (net.Listener, error) { return (&net.ListenConfig{}).Listen(ctx, "tcp", addr.String()) })
	if !ok {
		return
	}
	log.Info("Forwarding the registry", "to", target)
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go proxyTo(ctx, conn, target)
	}
}

// loopbackAddress is the address a registry named by its loopback host and port (127.0.0.1:5000,
// localhost:5001) is answered on; false for any other.
func loopbackAddress(registry string) (netip.AddrPort, bool) {
	host, port, err := net.SplitHostPort(registry)
	if err != nil {
		return netip.AddrPort{}, false
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	addr, err := netip.ParseAddrPort(net.JoinHostPort(host, port))
	return addr, err == nil && addr.Addr().IsLoopback()
}

// BridgeAddress is where a node reaches a registry of the host's loopback (127.0.0.1:5000): the
// same port on the host's bridge address, where the registry answers too.
func BridgeAddress(loopback string) string {
	_, port, _ := net.SplitHostPort(loopback)
	return net.JoinHostPort(hostnet.HostAddress.String(), port)
}

// proxyTo copies a connection to and from target until either side closes.
func proxyTo(ctx context.Context, conn net.Conn, target string) {
	defer conn.Close()
	up, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", target)
	if err != nil {
		return
	}
	defer up.Close()
	hostnet.Splice(ctx, conn, up)
}

// listenUntilDone listens with listen, trying again every 5 s while it fails (an address not
// yet there, a port still held), and closes what it got when the context ends. It is false when
// the context ended first.
func listenUntilDone[T io.Closer](ctx context.Context, log logr.Logger, listen func() (T, error)) (T, bool) {
	for ctx.Err() == nil {
		l, err := listen()
		if err == nil {
			go func() {
				<-ctx.Done()
				l.Close()
			}()
			return l, true
		}
		log.Info("Cannot listen yet; retrying", "error", err.Error())
		sleep(ctx, 5*time.Second)
	}
	var none T
	return none, false
}
