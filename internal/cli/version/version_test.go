package version_test

import (
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli/version"
)

func TestVersionPrintsSupportedKubernetesVersions(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	cmd := version.NewCommand(streams)
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"version: ", "kubernetes versions: v1.35.4, v1.34.3", "etcd version: v3.6.5"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output %q lacks %q", out.String(), want)
		}
	}
}
