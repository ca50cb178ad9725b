package lb

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// apiServer is a TLS server that answers /readyz with 200 when ready, 500 otherwise, and
// anything else with its name.
func apiServer(t *testing.T, name string, ready *atomic.Bool) string {
	return slowAPIServer(t, name, ready, &atomic.Bool{})
}

// slowAPIServer is an apiServer whose /readyz answers only after the check's timeout while slow.
func slowAPIServer(t *testing.T, name string, ready, slow *atomic.Bool) string {
	t.Helper()
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			if slow.Load() {
				time.Sleep(checkTimeout + 500*time.Millisecond)
			}
			if !ready.Load() {
				w.WriteHeader(http.StatusInternalServerError)
			}
			return
		}
		_, _ = io.WriteString(w, name)
	}))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "https://")
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
	var aReady, bReady atomic.Bool
	a, b := apiServer(t, "a", &aReady), apiServer(t, "b", &bReady)
	listen := runLB(t, a, b)
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
	// Give the checks time to run: a backend that listens but is not ready takes nothing.
	time.Sleep(3 * CheckInterval)
	if got := get(); got != "" {
		t.Fatalf("with no backend ready, a request was answered by %q", got)
	}
	aReady.Store(true)
	deadline := time.Now().Add((rise + 2) * CheckInterval)
	for get() != "a" {
		if time.Now().After(deadline) {
			t.Fatalf("backend a, ready, takes no connection after %s", (rise+2)*CheckInterval)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for range 4 {
		if got := get(); got != "a" {
			t.Fatalf("a request went to %q while only a is ready", got)
		}
	}
	bReady.Store(true)
	aReady.Store(false)
	time.Sleep((fall + 2) * CheckInterval)
	for range 4 {
		if got := get(); got != "b" {
			t.Fatalf("a request went to %q once a failed its checks and b passed them", got)
		}
	}
	// A backend that was ready once still serves when it is the only one that accepts.
	bReady.Store(false)
	time.Sleep((fall + 1) * CheckInterval)
	if got := get(); got != "a" && got != "b" {
		t.Fatalf("with both backends failing their checks, a request was answered by %q", got)
	}
}

// sessionTest is a load balancer over backends a (which can be made slow) and b, with a
// connection forwarded to a, the only ready one.
type sessionTest struct {
	aReady, aSlow, bReady atomic.Bool
	conn                  net.Conn
}

func newSessionTest(t *testing.T) *sessionTest {
	st := &sessionTest{}
	listen := runLB(t, slowAPIServer(t, "a", &st.aReady, &st.aSlow), apiServer(t, "b", &st.bReady))
	st.aReady.Store(true)
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
	st.aReady.Store(false)
	if !st.stillOpen((fall + 1) * CheckInterval) {
		t.Fatal("the connection to a was closed while a failed its checks and no other backend was ready")
	}
	// Ready again, then slow to answer while b becomes ready.
	st.aReady.Store(true)
	time.Sleep((rise + 1) * CheckInterval)
	st.aSlow.Store(true)
	st.bReady.Store(true)
	// b is ready after rise checks, while a misses fewer than closeAfter (each takes checkTimeout).
	if !st.stillOpen(rise*CheckInterval + 2*checkTimeout) {
		t.Fatal("the connection to a was closed while a was slow to answer for only a few checks")
	}
	st.aSlow.Store(false)
	st.aReady.Store(false)
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
	st.aSlow.Store(true)
	st.bReady.Store(true)
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
