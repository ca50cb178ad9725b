package envtest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

// The harness itself is exercised by every package that uses it; this checks what it says when
// it cannot start.
func TestStartWithoutAssetsSaysRunMakeAssets(t *testing.T) {
	t.Setenv(assets.DirEnv, t.TempDir())
	env, err := envtest.Start()
	if err == nil {
		_ = env.Stop()
		t.Fatal("Start() succeeded without binaries")
	}
	if !errors.Is(err, assets.ErrMissing) || !strings.Contains(err.Error(), "make assets") {
		t.Fatalf("Start() error %q does not say to run make assets", err)
	}
}

func TestCRDDirectoriesIncludeClusterAPI(t *testing.T) {
	dirs, err := envtest.CRDDirectories()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, d := range dirs {
		if strings.Contains(d, "sigs.k8s.io/cluster-api@") && strings.HasSuffix(d, "controlplane/kubeadm/config/crd/bases") {
			found = true
		}
	}
	if !found {
		t.Fatalf("CRD directories %v miss Cluster API's kubeadm control plane CRDs", dirs)
	}
}
