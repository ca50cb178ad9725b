package registry

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/internal/controllers/packaging/bundle"
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
