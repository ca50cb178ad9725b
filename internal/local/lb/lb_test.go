package lb

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// backend is a TLS server standing in for an API server: /readyz answers 200 while ready, 500
// otherwise, and only after the check's timeout while slow; anything else is answered with its
// name. It counts the checks it answered, so that a test waits for the load balancer's checks
// rather than for time.
type backend struct {
	addr        string
	ready, slow atomic.Bool
	checks      atomic.Int64
	name        string
}

func newBackend(t *testing.T, name string) *backend {
	t.Helper()
	b := &backend{name: name}
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			defer b.checks.Add(1)
			if b.slow.Load() {
				time.Sleep(checkTimeout + 500*time.Millisecond)
			}
			if !b.ready.Load() {
				w.WriteHeader(http.StatusInternalServerError)
			}
			return
		}
		_, _ = io.WriteString(w, name)
	}))
	t.Cleanup(s.Close)
	b.addr = strings.TrimPrefix(s.URL, "https://")
	return b
}

// checked waits until the backend has answered n checks that began after mark was taken
// (b.checks.Load(), just before the test changed the backend's state) and one more, so that the
// load balancer has taken in at least n answers given in the new state: the check under way at
// mark may have answered in the old one.
func (b *backend) checked(t *testing.T, mark int64, n int64) {
	t.Helper()
	limit := time.Duration(n+3) * (CheckInterval + checkTimeout)
	deadline := time.Now().Add(limit)
	for b.checks.Load() < mark+n+2 {
		if time.Now().After(deadline) {
			t.Fatalf("backend %s answered %d checks in %s, want %d", b.name, b.checks.Load()-mark, limit, n+2)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runLB runs a load balancer over backends on a free loopback port until the test ends, and
// returns its address.
func runLB(t *testing.T, backends ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, listen, func() []string { return backends }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return listen
}

// TestOnlyReadyBackends: before any backend was ready the load balancer closes connections; it
// forwards to a backend once its /readyz answered 200 rise times in a row, prefers the ready ones once a
// backend failed twice, and still forwards to backends that were ready once when none is now.
func TestOnlyReadyBackends(t *testing.T) {
	a, b := newBackend(t, "a"), newBackend(t, "b")
	listen := runLB(t, a.addr, b.addr)
	// A new connection per request, so that each is balanced anew.
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}} //nolint:gosec // test server
	get := func() string {
		resp, err := client.Get("https://" + listen + "/")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	// A backend that listens but has failed its checks takes nothing.
	a.checked(t, 0, 2)
	b.checked(t, 0, 2)
	if got := get(); got != "" {
		t.Fatalf("with no backend ready, a request was answered by %q", got)
	}
	mark := a.checks.Load()
	a.ready.Store(true)
	a.checked(t, mark, rise)
	for range 4 {
		if got := get(); got != "a" {
			t.Fatalf("a request went to %q after a passed %d checks, while only a is ready", got, rise)
		}
	}
	// Both ready: requests are shared.
	markB := b.checks.Load()
	b.ready.Store(true)
	b.checked(t, markB, rise)
	seen := map[string]bool{}
	for range 4 {
		seen[get()] = true
	}
	if !seen["a"] || !seen["b"] {
		t.Fatalf("with a and b ready, 4 requests went to %v, want both", seen)
	}
	// a fails fall checks: it takes no more requests.
	markA := a.checks.Load()
	a.ready.Store(false)
	a.checked(t, markA, fall)
	for range 4 {
		if got := get(); got != "b" {
			t.Fatalf("a request went to %q once a failed %d checks while b passed them", got, fall)
		}
	}
	// A backend that was ready once still serves when it is the only one that accepts.
	markB = b.checks.Load()
	b.ready.Store(false)
	b.checked(t, markB, fall)
	if got := get(); got != "a" && got != "b" {
		t.Fatalf("with both backends failing their checks, a request was answered by %q", got)
	}
}

// sessionTest is a load balancer over backends a (which can be made slow) and b, with a
// connection forwarded to a, the only ready one.
type sessionTest struct {
	a, b *backend
	conn net.Conn
}

func newSessionTest(t *testing.T) *sessionTest {
	st := &sessionTest{a: newBackend(t, "a"), b: newBackend(t, "b")}
	listen := runLB(t, st.a.addr, st.b.addr)
	st.a.ready.Store(true)
	st.conn = dialReady(t, listen)
	return st
}

// stillOpen says whether the connection is still open after wait.
func (st *sessionTest) stillOpen(wait time.Duration) bool {
	_ = st.conn.SetReadDeadline(time.Now().Add(wait))
	_, err := st.conn.Read(make([]byte, 1))
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestShutdownSessions: an open connection to a backend that fails its checks stays open while no
// other backend is ready, and while it only answers too slowly; it is closed once it answers
// that it is not ready and another backend is ready.
func TestShutdownSessions(t *testing.T) {
	st := newSessionTest(t)
	st.a.ready.Store(false)
	if !st.stillOpen((fall + 1) * CheckInterval) {
		t.Fatal("the connection to a was closed while a failed its checks and no other backend was ready")
	}
	// Ready again, then slow to answer while b becomes ready.
	mark := st.a.checks.Load()
	st.a.ready.Store(true)
	st.a.checked(t, mark, rise)
	st.a.slow.Store(true)
	st.b.ready.Store(true)
	// b is ready after rise checks, while a misses fewer than closeAfter (each takes checkTimeout).
	if !st.stillOpen(rise*CheckInterval + 2*checkTimeout) {
		t.Fatal("the connection to a was closed while a was slow to answer for only a few checks")
	}
	st.a.slow.Store(false)
	st.a.ready.Store(false)
	// Its checks answer 500 now: closed within a few checks (generous: a loaded host).
	if st.stillOpen(4 * (fall + 1) * CheckInterval) {
		t.Fatalf("the connection to a, which answers that it is not ready, is still open %s after b became ready", 4*(fall+1)*CheckInterval)
	}
}

// TestShutdownSessionsOfASilentBackend: a backend that stops answering its checks at all (an API
// server whose etcd member was removed answers after its own etcd checks time out) loses its
// connections once it missed closeAfter checks and another backend is ready.
func TestShutdownSessionsOfASilentBackend(t *testing.T) {
	st := newSessionTest(t)
	st.a.slow.Store(true)
	st.b.ready.Store(true)
	if bound := 2 * closeAfter * (checkTimeout + CheckInterval); st.stillOpen(bound) {
		t.Fatalf("the connection to a, which stopped answering its checks, is still open after %s", bound)
	}
}

// dialReady opens a TLS connection through the load balancer once its one ready backend takes
// it, and closes it when the test ends.
func dialReady(t *testing.T, listen string) net.Conn {
	t.Helper()
	deadline := time.Now().Add((rise + 2) * CheckInterval)
	for {
		c, err := tls.Dial("tcp", listen, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test server
		if err == nil {
			t.Cleanup(func() { c.Close() })
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ready backend takes no connection after %s: %v", (rise+2)*CheckInterval, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestRotate(t *testing.T) {
	for _, c := range []struct {
		start int
		want  string
	}{{0, "a b c"}, {1, "b c a"}, {5, "c a b"}} {
		if got := strings.Join(rotate([]string{"a", "b", "c"}, c.start), " "); got != c.want {
			t.Errorf("rotate(a b c, %d) = %s, want %s", c.start, got, c.want)
		}
	}
	if rotate(nil, 3) != nil {
		t.Error("rotate of nothing is not nothing")
	}
}

// TestBackendChecksAreLogged: what a backend's check finds is logged each time it changes, and
// only then, so that an endpoint that serves nothing says why in its log.
func TestBackendChecksAreLogged(t *testing.T) {
	a := newBackend(t, "a")
	var mu sync.Mutex
	var found []string
	logger := funcr.New(func(prefix, args string) {
		if strings.Contains(args, `"msg"="Backend check"`) {
			mu.Lock()
			defer mu.Unlock()
			found = append(found, args)
		}
	}, funcr.Options{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(logr.NewContext(t.Context(), logger))
	done := make(chan error, 1)
	go func() { done <- Run(ctx, listen, func() []string { return []string{a.addr} }) }()
	a.checked(t, 0, 2)
	mark := a.checks.Load()
	a.ready.Store(true)
	a.checked(t, mark, 2)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Checks of a loaded host may time out now and then, which is a change too; what may never
	// be is the same finding logged twice in a row.
	failed, passed := slices.IndexFunc(found, func(s string) bool { return strings.Contains(s, "500 Internal Server Error") }),
		slices.IndexFunc(found, func(s string) bool { return strings.Contains(s, "200 OK") })
	if failed < 0 || passed < failed {
		t.Fatalf("logged checks %q, want the 500, then the 200", found)
	}
	for i := 1; i < len(found); i++ {
		if found[i] == found[i-1] {
			t.Fatalf("the same finding was logged twice in a row: %q", found)
		}
	}
}
