// Package lb is the load balancer of the local runtime: a TCP proxy on a cluster's endpoint
// address that spreads connections over the control-plane nodes whose API servers are ready,
// as the haproxy container of a kind cluster does (health-checked backends) and as kube-vip does
// on vSphere (the endpoint answers once a control plane is up, not as soon as a port is open).
package lb

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/local/hostnet"
)

// Health checking, as haproxy's `inter 1s rise 3 fall 2`: a backend takes connections once its
// API server's /readyz answered 200 three times in a row. After two failures in a row it is tried
// only when no ready backend accepts a connection: an API server that is slow to answer its
// checks on a loaded host still serves, where a load balancer that dropped it would leave a
// cluster of one control-plane node without an endpoint.
//
// The connections forwarded to a backend that is no longer a control-plane node, or that is not
// ready (its API server answered so, refused the connection, or did not answer closeAfter checks
// in a row), are closed as soon as another backend is ready, as haproxy's `on-marked-down shutdown-sessions`
// and as kube-vip's address moving to another node do. A client's HTTP/2 connection otherwise
// stays on an API server whose etcd member was removed (the old node of a rollout) and every
// request on it hangs: on a self-hosted management cluster, that is the connection of the
// controllers that would finish the rollout; such an API server answers its /readyz only after
// its own etcd checks time out, later than a check waits. A backend that is only slow for a few
// checks keeps its connections.
const (
	CheckInterval = time.Second
	checkTimeout  = 2 * time.Second
	rise, fall    = 3, 2
	closeAfter    = 5
)

// Run listens on listen and forwards each connection to a ready backend, in round-robin order,
// until the context ends. backends is asked at each check, since the control-plane nodes of a
// Cluster API cluster come and go while it runs. A connection that comes before any backend was
// ready is closed, as a load balancer with no server up does: a new cluster's endpoint answers
// once its first API server is ready, as kube-vip's address on vSphere does, by when kubeadm
// init has uploaded its configuration.
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
	h := newHealth(backends)
	// The checks end with Run, whichever way it ends, and Run with them.
	checkCtx, stopChecks := context.WithCancel(ctx)
	checking := make(chan struct{})
	go func() {
		defer close(checking)
		h.run(checkCtx)
	}()
	defer func() {
		stopChecks()
		<-checking
	}()
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
			up, down := h.ready()
			forward(ctx, conn, append(rotate(up, start), down...), h.track)
		}()
	}
}

// health keeps which backends are ready.
type health struct {
	backends func() []string
	client   *http.Client
	mu       sync.Mutex
	// streak counts the last checks of a backend that agree: > 0 successes, < 0 failures.
	streak map[string]int
	up     map[string]bool
	// served holds the backends that were ready once.
	served map[string]bool
	// refused holds the backends whose last failed check was answered or refused, not timed out.
	refused map[string]bool
	// order is the backends of the last check, in the order backends gave them.
	order []string
	// sessions holds the open connections to each backend.
	sessions map[string]map[net.Conn]bool
	// seen is what the last check of each backend found, logged when it changes.
	seen map[string]string
}

func newHealth(backends func() []string) *health {
	return &health{
		backends: backends,
		client: &http.Client{Timeout: checkTimeout, Transport: &http.Transport{
			// A probe of the node's own API server, as haproxy's `check-ssl verify none`: the
			// answer is what matters, not who serves it.
			// The connection is kept from check to check: a TLS handshake each second to each
			// API server would cost the host more than the checks themselves.
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, //nolint:gosec // health probe only
		}},
		streak: map[string]int{}, up: map[string]bool{}, served: map[string]bool{}, refused: map[string]bool{},
		sessions: map[string]map[net.Conn]bool{}, seen: map[string]string{},
	}
}

// run checks every backend each CheckInterval until ctx ends.
func (h *health) run(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx)
	t := time.NewTicker(CheckInterval)
	defer t.Stop()
	for {
		addrs := h.backends()
		results := make([]result, len(addrs))
		found := make([]string, len(addrs))
		var wg sync.WaitGroup
		for i, addr := range addrs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], found[i] = h.check(ctx, addr)
			}()
		}
		wg.Wait()
		if ctx.Err() != nil {
			// The checks cut short by the end are no finding.
			return
		}
		h.mu.Lock()
		h.order = addrs
		for addr := range h.streak {
			if !slices.Contains(addrs, addr) {
				delete(h.streak, addr)
				delete(h.up, addr)
				delete(h.served, addr)
				delete(h.refused, addr)
				delete(h.seen, addr)
			}
		}
		for i, addr := range addrs {
			s := h.streak[addr]
			switch {
			case results[i] == ready && s >= 0:
				s++
			case results[i] == ready:
				s = 1
			case s <= 0:
				s--
			default:
				s = -1
			}
			h.streak[addr] = s
			if found[i] != h.seen[addr] {
				// Each change of what a backend answers, so that an endpoint that serves nothing
				// says why.
				h.seen[addr] = found[i]
				log.Info("Backend check", "backend", addr, "found", found[i])
			}
			if results[i] != ready {
				h.refused[addr] = results[i] == refused
			}
			if s >= rise && !h.up[addr] {
				h.up[addr], h.served[addr] = true, true
				log.Info("Backend ready", "backend", addr)
			} else if s <= -fall && h.up[addr] {
				h.up[addr] = false
				log.Info("Backend not ready", "backend", addr)
			}
		}
		h.shutdownSessions(log)
		h.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// shutdownSessions closes the connections to every backend that is gone, or not ready and
// refusing, while another one is ready. h.mu is held.
func (h *health) shutdownSessions(log logr.Logger) {
	if !slices.ContainsFunc(h.order, func(addr string) bool { return h.up[addr] }) {
		return
	}
	for addr, conns := range h.sessions {
		streak, current := h.streak[addr]
		if h.up[addr] || len(conns) == 0 || (current && !h.refused[addr] && streak > -closeAfter) {
			continue
		}
		for c := range conns {
			c.Close()
		}
		log.Info("Closed the connections to a backend that is not ready", "backend", addr, "connections", len(conns))
		delete(h.sessions, addr)
	}
}

// track records an open connection to a backend until the returned function is called.
func (h *health) track(addr string, c net.Conn) (untrack func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions[addr] == nil {
		h.sessions[addr] = map[net.Conn]bool{}
	}
	h.sessions[addr][c] = true
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.sessions[addr], c)
	}
}

// result is what one health check found.
type result int

const (
	ready result = iota
	// refused: the API server answered that it is not ready, or its port refused the connection.
	refused
	// slow: no answer within the check's timeout.
	slow
)

// check asks the API server at addr whether it is ready, and says what it found.
func (h *health) check(ctx context.Context, addr string) (result, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/readyz", nil)
	if err != nil {
		return slow, err.Error()
	}
	resp, err := h.client.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return refused, "connection refused"
		}
		return slow, describe(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return refused, resp.Status
	}
	return ready, resp.Status
}

// describe says what a failed check met without the addresses and ports of its connection,
// which change from check to check: "read: connection reset by peer", "no answer within 2s".
func describe(err error) string {
	var op *net.OpError
	switch {
	case errors.As(err, &op):
		return op.Op + ": " + op.Err.Error()
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		return "no answer within " + checkTimeout.String()
	}
	return err.Error()
}

// ready returns the backends to try, in the order of the last check: the ready ones, and those
// that were ready once and fail their checks now.
func (h *health) ready() (up, down []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, addr := range h.order {
		switch {
		case h.up[addr]:
			up = append(up, addr)
		case h.served[addr]:
			down = append(down, addr)
		}
	}
	return up, down
}

// rotate returns s begun at its element start (modulo its length): round-robin order.
func rotate(s []string, start int) []string {
	if len(s) == 0 {
		return nil
	}
	start %= len(s)
	return append(slices.Clone(s[start:]), s[:start]...)
}

// forward copies a connection to and from the first of backends that accepts it, tracked as a
// session of that backend while it lasts.
func forward(ctx context.Context, client net.Conn, backends []string, track func(string, net.Conn) func()) {
	defer client.Close()
	var backend net.Conn
	for _, addr := range backends {
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			backend = c
			defer track(addr, c)()
			break
		}
	}
	if backend == nil {
		return
	}
	defer backend.Close()
	hostnet.Splice(ctx, client, backend)
}
