package vm

import (
	"context"
	"net"
	"net/netip"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/local/hostnet"
)

// forwardRegistry makes the local registry's loopback address (127.0.0.1:5000) answer in the
// node's network namespace too, by forwarding its connections to the registry on the bridge
// (the host's address, same port): what names the registry by that address — the package
// repository's bundles, which the package controller fetches from a host-network pod — works on
// the node as it does on the host. It returns when the context ends.
func forwardRegistry(ctx context.Context, loopback string) {
	log := ctrl.LoggerFrom(ctx).WithValues("registry", loopback)
	addr, err := netip.ParseAddrPort(loopback)
	if err != nil || !addr.Addr().IsLoopback() {
		log.Info("Not forwarding the local registry: its address is not a loopback address and port")
		return
	}
	target := netip.AddrPortFrom(hostnet.HostAddress, addr.Port()).String()
	var l net.Listener
	for ctx.Err() == nil {
		if l, err = (&net.ListenConfig{}).Listen(ctx, "tcp", loopback); err == nil {
			break
		}
		log.Info("Cannot listen for the local registry yet; retrying", "error", err.Error())
		sleep(ctx, 5*time.Second)
	}
	if l == nil {
		return
	}
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	log.Info("Forwarding the local registry", "to", target)
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go proxyTo(ctx, conn, target)
	}
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
