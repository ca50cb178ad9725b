// Package lb is the load balancer of the local runtime: a TCP proxy on a cluster's endpoint
// address that spreads connections over the control-plane nodes whose API servers accept them,
// as the haproxy container of a kind cluster with several control-plane nodes does.
package lb

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Run listens on listen and forwards each connection to the first backend, in round-robin
// order, that accepts it, until the context ends. backends is asked for each connection, since
// the control-plane nodes of a Cluster API cluster come and go while it runs.
func Run(ctx context.Context, listen string, backends func() []string) error {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("failed to listen on %s: %w", listen, err)
	}
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	log := ctrl.LoggerFrom(ctx)
	log.Info("Load balancing", "listen", listen, "backends", backends())
	var next atomic.Uint32
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		start := int(next.Add(1))
		wg.Add(1)
		go func() {
			defer wg.Done()
			forward(ctx, conn, backends(), start)
		}()
	}
}

func forward(ctx context.Context, client net.Conn, backends []string, start int) {
	defer client.Close()
	var backend net.Conn
	for i := range backends {
		addr := backends[(start+i)%len(backends)]
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			backend = c
			break
		}
	}
	if backend == nil {
		return
	}
	defer backend.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(backend, client); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, backend); done <- struct{}{} }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
