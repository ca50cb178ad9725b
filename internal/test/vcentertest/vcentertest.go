// Package vcentertest serves slipway's vCenter simulator to tests.
package vcentertest

import (
	"net"
	"testing"

	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
)

// Password is the simulator user's password in tests.
const Password = "s3cret"

// Start serves a simulator, with the seeds' inventory, on a free loopback port until the test
// ends.
func Start(t testing.TB) *simulator.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := l.Addr().String()
	_ = l.Close()
	s, err := simulator.Start(t.Context(), simulator.Options{Address: address, Dir: t.TempDir(), Username: simulator.DefaultUsername, Password: Password})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}
