package registrytrust_test

import (
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/internal/registrytrust"
	"github.com/slipway-dev/slipway/internal/test/testregistry"
)

// tlsRegistry serves a registry over TLS with a certificate of its own CA, holds one image, and
// returns its reference and the CA's PEM.
func tlsRegistry(t *testing.T) (name.Reference, string) {
	t.Helper()
	host, ca, transport := testregistry.StartTLS(t)
	ref, err := name.ParseReference(host + "/tkg/image:v1")
	if err != nil {
		t.Fatal(err)
	}
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithTransport(transport)); err != nil {
		t.Fatal(err)
	}
	return ref, ca
}

// TestTransportTrustsWhatItIsTold reads an image from a registry whose CA the system does not
// trust: refused by default (Untrusted says so), read with its CA, read with its host
// unverified, refused when another host is unverified; CA certificates without one are an error.
func TestTransportTrustsWhatItIsTold(t *testing.T) {
	ref, ca := tlsRegistry(t)
	read := func(trust registrytrust.Trust) error {
		transport, err := trust.Transport()
		if err != nil {
			t.Fatal(err)
		}
		opts := []remote.Option{remote.WithContext(t.Context())}
		if transport != nil {
			opts = append(opts, remote.WithTransport(transport))
		}
		_, err = remote.Image(ref, opts...)
		return err
	}
	if err := read(registrytrust.Trust{}); err == nil || !registrytrust.Untrusted(err) {
		t.Errorf("without trust: %v, want a certificate the system does not trust", err)
	}
	if err := read(registrytrust.Trust{CACerts: ca}); err != nil {
		t.Errorf("with its CA: %v", err)
	}
	host := ref.Context().RegistryStr()
	if err := read(registrytrust.Trust{SkipVerify: registrytrust.Hosts(" other.example.com, " + host)}); err != nil {
		t.Errorf("with %s unverified: %v", host, err)
	}
	bare, _, _ := strings.Cut(host, ":")
	if err := read(registrytrust.Trust{SkipVerify: []string{bare}}); err != nil {
		t.Errorf("with %s unverified (no port): %v", bare, err)
	}
	if err := read(registrytrust.Trust{SkipVerify: []string{"other.example.com"}}); err == nil {
		t.Error("with another host unverified: read, want refused")
	}
	if _, err := (registrytrust.Trust{CACerts: "not a certificate"}).Transport(); err == nil {
		t.Error("CA certificates without a certificate: no error")
	}
	if transport, err := (registrytrust.Trust{}).Transport(); transport != nil || err != nil {
		t.Errorf("empty trust: %v, %v; want the default transport (nil)", transport, err)
	}
}
