// Package vcentertest serves slipway's vCenter simulator to tests.
package vcentertest

import (
	"net"
	"testing"

	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
)

// Password is the simulator user's password in tests.
const Password = "s3cret"

// FreeAddress returns a loopback HOST:PORT nothing listens on, for a simulator to serve on.
func FreeAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Start serves a simulator, with the seeds' inventory, on a free loopback port until the test
// ends.
func Start(t testing.TB) *simulator.Server {
	t.Helper()
	s, err := simulator.Start(t.Context(), simulator.Options{Address: FreeAddress(t), Dir: t.TempDir(), Username: simulator.DefaultUsername, Password: Password})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}
