package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/slipway-dev/slipway/internal/client/clusterctl"
	"github.com/slipway-dev/slipway/internal/images"
)

// TestSlipwayProvidersHoldTheirRoles builds slipway's providers from config/ and checks that
// every ClusterRoleBinding names a ClusterRole the components hold: the role make generate
// writes from the provider's RBAC markers.
func TestSlipwayProvidersHoldTheirRoles(t *testing.T) {
	for _, p := range clusterctl.Providers() {
		if p.Module != "" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join("..", "..", p.KustomizeDir))
			if err != nil {
				t.Fatal(err)
			}
			roles := map[string]bool{}
			for _, r := range resources.Resources() {
				if r.GetKind() == "ClusterRole" {
					roles[r.GetName()] = true
				}
			}
			bindings := 0
			for _, r := range resources.Resources() {
				if r.GetKind() != "ClusterRoleBinding" {
					continue
				}
				bindings++
				name, err := r.GetString("roleRef.name")
				if err != nil {
					t.Fatal(err)
				}
				if !roles[name] {
					t.Errorf("ClusterRoleBinding %s binds ClusterRole %s, which the components do not hold", r.GetName(), name)
				}
			}
			if bindings == 0 {
				t.Error("no ClusterRoleBinding")
			}
		})
	}
}

// TestUpstreamProvidersRunSlipwayComponents builds the repository and checks that each upstream
// provider's Deployment names its release image locked by digest to the image `make images`
// built, and never the staging image its kustomization names; and that cert-manager is
// upstream's release, its three images built here.
func TestUpstreamProvidersRunSlipwayComponents(t *testing.T) {
	out := t.TempDir()
	// The build reads slipway's providers from config/, relative to the source tree, and the
	// cert-manager manifest `make providers` renders.
	t.Chdir(filepath.Join("..", ".."))
	manifest := filepath.Join("bin", "cert-manager", clusterctl.CertManagerVersion, clusterctl.CertManagerFile)
	if err := build(out, manifest, filepath.Join("bin", images.LayoutDir)); err != nil {
		t.Fatal(err)
	}
	certManager, err := os.ReadFile(filepath.Join(out, clusterctl.CertManagerName, clusterctl.CertManagerVersion, clusterctl.CertManagerFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, image := range clusterctl.CertManagerImages {
		if !strings.Contains(string(certManager), "image: "+image+"@sha256:") {
			t.Errorf("cert-manager's components do not run %s, locked by digest", image)
		}
	}
	if !strings.Contains(string(certManager), "kind: CustomResourceDefinition") || !strings.Contains(string(certManager), "name: certificates.cert-manager.io") {
		t.Error("cert-manager's components hold no Certificate CRD")
	}
	for _, p := range clusterctl.Providers() {
		if p.StagingImage == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(out, p.Name, p.Version, p.ComponentsFile))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "image: "+p.Image+"@sha256:") || strings.Contains(string(data), p.StagingImage) {
			t.Errorf("%s: the components do not run %s, locked by digest, in place of %s", p.Name, p.Image, p.StagingImage)
		}
		if p.UpstreamPrefix != "" {
			checkRenamed(t, p, string(data))
		}
	}
}

// checkRenamed checks that a provider TKG renames has none of upstream's names left, lives in
// its own namespace, and that its webhook's Deployment mounts the Secret its Certificate writes:
// upstream's patch of the Deployment names that Secret literally.
func checkRenamed(t *testing.T, p clusterctl.Provider, components string) {
	t.Helper()
	if strings.Contains(components, p.UpstreamPrefix) {
		t.Errorf("%s: the components still name %s…", p.Name, p.UpstreamPrefix)
	}
	if !strings.Contains(components, "namespace: "+p.Prefix+"system\n") {
		t.Errorf("%s: nothing is in the namespace %ssystem", p.Name, p.Prefix)
	}
	secrets := map[string]int{}
	for _, m := range regexp.MustCompile(`secretName: (\S+)`).FindAllStringSubmatch(components, -1) {
		secrets[m[1]]++
	}
	for name, n := range secrets {
		if n != 2 {
			t.Errorf("%s: Secret %s is named %d times, want twice (the Certificate and the volume that mounts it)", p.Name, name, n)
		}
	}
	if len(secrets) == 0 {
		t.Errorf("%s: no Secret named: the webhook's certificate is missing", p.Name)
	}
}

// TestLockImages checks that the components name every image by tag and digest, and that an image
// `make images` did not build is refused by name.
func TestLockImages(t *testing.T) {
	digest := "sha256:" + strings.Repeat("1", 64)
	digests := map[string]string{"registry.k8s.io/cluster-api/cluster-api-controller:v1.13.4": digest}
	in := "spec:\n  containers:\n  - image: registry.k8s.io/cluster-api/cluster-api-controller:v1.13.4\n    name: manager\n"
	out, err := lockImages([]byte(in), digests)
	if err != nil {
		t.Fatal(err)
	}
	if want := "  - image: registry.k8s.io/cluster-api/cluster-api-controller:v1.13.4@" + digest + "\n"; !strings.Contains(string(out), want) {
		t.Errorf("locked:\n%s\nwant a line %q", out, want)
	}
	if _, err := lockImages([]byte("image: quay.io/jetstack/cert-manager-controller:v1.11.5\n"), digests); err == nil ||
		!strings.Contains(err.Error(), "quay.io/jetstack/cert-manager-controller:v1.11.5") {
		t.Errorf("an image not built: %v", err)
	}
}
