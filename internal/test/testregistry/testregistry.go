// Package testregistry serves an in-memory OCI registry (go-containerregistry's) for tests.
package testregistry

import (
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Start serves a registry on 127.0.0.1 until the test ends and returns its host:port.
func Start(t testing.TB) string {
	t.Helper()
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	return strings.TrimPrefix(reg.URL, "http://")
}

// StartOnEveryAddress serves a registry on every address of the host until the test ends, so that
// real nodes reach it on the host's bridge address, and returns its host:port on 127.0.0.1.
func StartOnEveryAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	reg.Listener.Close()
	reg.Listener = l
	reg.Start()
	t.Cleanup(reg.Close)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
}

// StartTLS serves a registry over TLS, with a certificate of a CA of its own, until the test
// ends. It returns its host:port, the CA's PEM, and a transport that trusts it (to push with).
func StartTLS(t testing.TB) (host, caPEM string, transport http.RoundTripper) {
	t.Helper()
	reg := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	// A client that does not trust the CA (a check that such a pull is refused) is expected: its
	// handshake errors are not the test's output.
	reg.Config.ErrorLog = log.New(io.Discard, "", 0)
	reg.StartTLS()
	t.Cleanup(reg.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: reg.Certificate().Raw})
	return strings.TrimPrefix(reg.URL, "https://"), string(ca), reg.Client().Transport
}
