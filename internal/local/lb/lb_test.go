package lb

import (
	"context"
	"crypto/tls"
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
	t.Helper()
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
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

// TestOnlyReadyBackends: before any backend was ready the load balancer closes connections; it
// forwards to a backend once its /readyz answered 200 rise times in a row, prefers the ready ones once a
// backend failed twice, and still forwards to backends that were ready once when none is now.
func TestOnlyReadyBackends(t *testing.T) {
	var aReady, bReady atomic.Bool
	a, b := apiServer(t, "a", &aReady), apiServer(t, "b", &bReady)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, listen, func() []string { return []string{a, b} }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
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
