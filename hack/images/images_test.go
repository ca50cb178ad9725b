package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/client/clusterctl"
	"github.com/slipway-dev/slipway/internal/components"
)

// imageLine finds the images that manifests and locks name.
var imageLine = regexp.MustCompile(`(?m)^\s*-?\s*image:\s*"?([a-z0-9.-]+\.[a-z]+/[^\s"]+)"?\s*$`)

// clusterctlDefault is clusterctl's ${VAR:=default}.
var clusterctlDefault = regexp.MustCompile(`\$\{[A-Z_]+:=([^}]+)\}`)

// namedImages returns every image reference the package locks, the provider manifests of this
// tree, the local runtime's pod network and the provider repository's upstream providers name,
// by tag.
func namedImages(t *testing.T, root string) map[string]string {
	t.Helper()
	named := map[string]string{}
	var files []string
	for _, pattern := range []string{"packages/*/*/bundle/.imgpkg/images.yml", "config/*/*.yaml", "internal/local/podnet/*.yaml"} {
		matches, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range imageLine.FindAllStringSubmatch(string(data), -1) {
			named[clusterctlDefault.ReplaceAllString(m[1], "$1")] = f
		}
	}
	for ref, where := range releaseImages(t, root) {
		named[ref] = where
	}
	// Upstream's cert-manager, which the e2e test runs on real nodes with its release manifest.
	for _, name := range []string{"controller", "webhook", "cainjector"} {
		named[certManagerRef(name)] = "test/e2e (upstream cert-manager on real nodes)"
	}
	// The local runtime's storage manifest, rendered with it (internal/local/cluster tests that).
	named[assets.LocalPathProvisionerImage] = "the local runtime's default StorageClass"
	for _, p := range clusterctl.Providers() {
		if p.Image != "" {
			named[p.Image] = "the provider repository (" + p.Name + ")"
		}
	}
	return named
}

// releaseImages returns the images of Kubernetes itself that each TKR of packages/tkr names, as
// kubeadm names them from the release's imageRepository and tags.
func releaseImages(t *testing.T, root string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "packages/tkr/*/values.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no TKR values in packages/tkr: %v", err)
	}
	named := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Kubernetes struct{ Version, Etcd, Pause, CoreDNS, KubeVIP string } `json:"kubernetes"`
		}
		if err := yaml.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		tag := strings.ReplaceAll(v.Kubernetes.Version, "+", "_")
		for _, cmd := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
			named[tkgRepository+cmd+":"+tag] = f
		}
		named[tkgRepository+"coredns:"+v.Kubernetes.CoreDNS] = f
		named[tkgRepository+"etcd:"+v.Kubernetes.Etcd] = f
		named[tkgRepository+"pause:"+v.Kubernetes.Pause] = f
		// The static pod TKG's vSphere ClusterClass writes on control-plane VMs.
		named[tkgRepository+"kube-vip:"+v.Kubernetes.KubeVIP] = f
	}
	return named
}

// TestEveryNamedImageIsBuilt checks that every image a package, a provider manifest or the
// provider repository names is one `make images` builds, and that the slipway component each
// image runs exists: one missing would leave its pod unable to start.
func TestEveryNamedImageIsBuilt(t *testing.T) {
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	built := map[string]spec{}
	for _, s := range specs() {
		if _, dup := built[s.ref]; dup {
			t.Errorf("image %s is built twice", s.ref)
		}
		built[s.ref] = s
	}
	named := namedImages(t, root)
	if len(named) < 30 {
		t.Fatalf("found %d named images: %v", len(named), named)
	}
	for ref, where := range named {
		if _, ok := built[ref]; !ok {
			t.Errorf("%s names %s, which `make images` does not build: add it to hack/images/images.go", where, ref)
		}
	}
	registry := components.Default()
	for _, s := range specs() {
		if _, ok := named[s.ref]; !ok {
			t.Errorf("image %s is built but named nowhere", s.ref)
		}
		if s.bin == slipwayBinary {
			if _, err := registry.Get(s.component); err != nil {
				t.Errorf("image %s: %v", s.ref, err)
			}
		}
		if s.bin.source != slipwayModule && s.help == "" {
			t.Errorf("upstream image %s says nothing its --help must print", s.ref)
		}
		if strings.Contains(s.ref, "@") || tagOf(s.ref) == "" {
			t.Errorf("image %s is not named by a tag", s.ref)
		}
	}
}
