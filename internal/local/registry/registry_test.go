package registry

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/local/hostnet"
	"github.com/slipway-dev/slipway/internal/local/vm"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
)

// TestBundlesSurviveARestart pushes a bundle, starts a new registry on the same directory and
// pulls it back.
func TestBundlesSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	src := testfiles.WriteTree(t, map[string]string{".imgpkg/images.yml": "kind: ImagesLock\n", "config/a.yml": "a: 1\n"})
	h, err := NewHandler(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := httptest.NewServer(h)
	ref, err := bundle.Push(src, strings.TrimPrefix(first.URL, "http://")+"/packages/a:v1")
	first.Close()
	if err != nil {
		t.Fatal(err)
	}
	h2, err := NewHandler(dir)
	if err != nil {
		t.Fatal(err)
	}
	second := httptest.NewServer(h2)
	defer second.Close()
	host := strings.TrimPrefix(second.URL, "http://")
	for _, r := range []string{host + "/packages/a:v1", host + "/packages/a@" + strings.SplitN(ref, "@", 2)[1]} {
		parsed, err := name.ParseReference(r, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		img, err := remote.Image(parsed)
		if err != nil {
			t.Fatalf("%s lost on restart: %v", r, err)
		}
		if _, err := img.Layers(); err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil || cfg.Config.Labels[bundle.LabelBundle] != "true" {
			t.Fatalf("%s is not a bundle: %v %v", r, cfg, err)
		}
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	if err := Serve(t.Context(), "0.0.0.0:0", t.TempDir()); err == nil || !strings.Contains(err.Error(), "only on loopback") {
		t.Fatalf("Serve on 0.0.0.0: %v", err)
	}
}

// TestServeAnswersNodes checks that the registry answers the local runtime's nodes on the host's
// bridge address, at its loopback port.
func TestServeAnswersNodes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the host's bridge needs root: run the tests as root")
	}
	if err := vm.EnsureBridge(); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	nodes := make(chan string, 1)
	go func() { _ = serve(t.Context(), addr, t.TempDir(), func(a string) { nodes <- a }) }()
	var bridge string
	select {
	case bridge = <-nodes:
	case <-time.After(10 * time.Second):
		t.Fatal("the registry did not listen on the bridge")
	}
	_, port, _ := net.SplitHostPort(addr)
	if want := net.JoinHostPort(hostnet.HostAddress.String(), port); bridge != want {
		t.Fatalf("the registry answers nodes on %s, want %s", bridge, want)
	}
	for _, a := range []string{addr, bridge} {
		resp, err := http.Get("http://" + a + "/v2/")
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s/v2/: %s", a, resp.Status)
		}
	}
}
