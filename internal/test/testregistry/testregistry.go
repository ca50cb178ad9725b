// Package testregistry serves an in-memory OCI registry (go-containerregistry's) for tests.
package testregistry

import (
	"io"
	"log"
	"net/http/httptest"
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
