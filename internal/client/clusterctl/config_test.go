package clusterctl

import (
	"strings"
	"testing"

	clusterctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
)

// TestConfigRunsProviderImagesFromWhereTheyAre writes the configuration with provider images
// located beside a relocated repository and checks, through clusterctl's own image override,
// that each image the locations name runs from there with its tag and digest kept, and that
// the others keep their names.
func TestConfigRunsProviderImagesFromWhereTheyAre(t *testing.T) {
	digest := "@sha256:" + strings.Repeat("a", 64)
	core := "registry.k8s.io/cluster-api/cluster-api-controller:" + Version
	located := map[string]string{
		core:                 "127.0.0.1:5001/tkg/slipway-repo" + digest,
		CertManagerImages[1]: "127.0.0.1:5000/jetstack/cert-manager-controller" + digest,
		// Not an image of the providers: ignored.
		"127.0.0.1:5000/packages/metrics-server:0.7.2": "127.0.0.1:5001/tkg/slipway-repo" + digest,
	}
	path, err := Config(t.TempDir(), t.TempDir(), located)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clusterctlconfig.New(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ component, image, want string }{
		{"cluster-api", core + digest, "127.0.0.1:5001/tkg/slipway-repo:" + Version + digest},
		{CertManagerName, CertManagerImages[1] + digest, "127.0.0.1:5000/jetstack/cert-manager-controller:" + CertManagerVersion + digest},
		{"bootstrap-kubeadm", "registry.k8s.io/cluster-api/kubeadm-bootstrap-controller:" + Version + digest,
			"registry.k8s.io/cluster-api/kubeadm-bootstrap-controller:" + Version + digest},
	} {
		got, err := cfg.ImageMeta().AlterImage(c.component, c.image)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s runs %s, want %s", c.image, got, c.want)
		}
	}
	if _, err := Config(t.TempDir(), t.TempDir(), map[string]string{core: "nowhere" + digest}); err == nil {
		t.Error("a location without a registry was accepted")
	}
}
