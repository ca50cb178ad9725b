package assets_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/internal/assets"
)

func TestFindHonoursEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(assets.DirEnv, dir)
	set, err := assets.Find()
	if err != nil {
		t.Fatal(err)
	}
	if set.Dir != dir {
		t.Fatalf("Find() = %q, want %q", set.Dir, dir)
	}
}

func TestMissingBinariesSayHowToBuildThem(t *testing.T) {
	set := assets.Set{Dir: t.TempDir()}
	for name, get := range map[string]func() (string, error){
		"kube-apiserver": func() (string, error) { return set.Kubernetes("v1.35.4", assets.KubeAPIServer) },
		"etcd":           set.EtcdPath,
	} {
		_, err := get()
		if !errors.Is(err, assets.ErrMissing) {
			t.Errorf("%s: error %v does not wrap ErrMissing", name, err)
		}
		if err == nil || !strings.Contains(err.Error(), "make assets") {
			t.Errorf("%s: error %v does not say to run make assets", name, err)
		}
	}
}

func TestUnsupportedVersionNamesTheSupportedOnes(t *testing.T) {
	_, err := assets.Set{Dir: t.TempDir()}.Kubernetes("v1.20.0", assets.KubeAPIServer)
	if err == nil || !strings.Contains(err.Error(), "v1.35.4, v1.34.3") {
		t.Fatalf("error %v does not list the supported versions", err)
	}
}

func TestFoundBinary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k8s", "v1.34.3", assets.KubeScheduler)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := assets.Set{Dir: dir}
	if _, err := set.Kubernetes("v1.34.3", assets.KubeScheduler); !errors.Is(err, assets.ErrMissing) {
		t.Fatalf("a binary that is not executable is reported as %v", err)
	}
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := set.Kubernetes("v1.34.3", assets.KubeScheduler)
	if err != nil || got != path {
		t.Fatalf("Kubernetes() = %q, %v; want %q", got, err, path)
	}
	// A TKR's version (build metadata after "+") runs its release's binary.
	if got, err := set.Kubernetes("v1.34.3+vmware.1", assets.KubeScheduler); err != nil || got != path {
		t.Fatalf("Kubernetes(v1.34.3+vmware.1) = %q, %v; want %q", got, err, path)
	}
	if _, err := set.Kubernetes("v1.33.0+vmware.1", assets.KubeScheduler); err == nil {
		t.Fatal("a TKR version of an unsupported release is accepted")
	}
}

func TestReleaseOfTakesATKRsVersion(t *testing.T) {
	for _, v := range []string{"v1.35.4", "v1.35.4+vmware.1"} {
		if r, err := assets.ReleaseOf(v); err != nil || r.Version != "v1.35.4" {
			t.Errorf("ReleaseOf(%s) = %s, %v", v, r.Version, err)
		}
	}
	if _, err := assets.ReleaseOf("v1.33.1+vmware.1"); err == nil {
		t.Error("ReleaseOf took a version slipway has no release of")
	}
}
