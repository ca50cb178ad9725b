package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// TestCreateTakesATKRName checks `cluster create --tkr` as TKG takes it: a release's name, or a
// prefix of it that picks the newest, overriding the file's KUBERNETES_VERSION; an unknown one
// is refused with the releases there are.
func TestCreateTakesATKRName(t *testing.T) {
	ready := func(version string) *runv1alpha3.TanzuKubernetesRelease {
		r := &runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(version, "+", "---")}}
		r.Spec.Version = version
		r.Spec.Kubernetes.Version = version[:strings.Index(version, "-tkg")]
		r.Status.Conditions = runv1alpha3.Conditions{{Type: runv1alpha3.ConditionReady, Status: corev1.ConditionTrue}}
		return r
	}
	path := filepath.Join(t.TempDir(), "wc.yaml")
	if err := os.WriteFile(path, []byte("CLUSTER_NAME: wc\nCLUSTER_PLAN: dev\nINFRASTRUCTURE_PROVIDER: local\nKUBERNETES_VERSION: v1.35.4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tkr, want, wantErr string }{
		{"v1.34.3---vmware.1-tkg.1", "v1.34.3---vmware.1-tkg.1", ""},
		{"v1.34", "v1.34.3---vmware.1-tkg.2", ""},
		{"v1.34.3+vmware.1-tkg.1", "v1.34.3---vmware.1-tkg.1", ""},
		{"v1.99", "", `no Ready, active TanzuKubernetesRelease is named "v1.99" or starts with it: use one of v1.34.3---vmware.1-tkg.1, v1.34.3---vmware.1-tkg.2, v1.35.4---vmware.1-tkg.1`},
		{"v1.3", "", `no Ready, active TanzuKubernetesRelease is named "v1.3"`},
	} {
		t.Run(tc.tkr, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(ready("v1.34.3+vmware.1-tkg.1"), ready("v1.34.3+vmware.1-tkg.2"),
				ready("v1.35.4+vmware.1-tkg.1")).Build()
			var out, lines bytes.Buffer
			err := Create(t.Context(), CreateOptions{File: path, Client: c, Home: t.TempDir(), DryRun: true, Out: &out, Progress: progress.ForWriter(&lines), TKR: tc.tkr})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, lines.String())
			}
			// The TKR resolver resolves the release's own version to it, and no other.
			if want := "version: " + strings.ReplaceAll(tc.want, "---", "+") + "\n"; !strings.Contains(out.String(), want) {
				t.Errorf("the Cluster is not of release %s (no %q):\n%s", tc.want, want, out.String())
			}
		})
	}
}

// TestCreateLocalPullsFromACopyOnThisHost checks that a workload cluster of the local provider
// takes TKG_CUSTOM_IMAGE_REPOSITORY as its ClusterClass's imageRepository variable, as TKG does,
// which the nodes pull from, when it is on this host's loopback, and is refused, naming the
// variable, when it is elsewhere, where no node reaches.
func TestCreateLocalPullsFromACopyOnThisHost(t *testing.T) {
	tkr := &runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: "v1.35.4---vmware.1-tkg.1"}}
	tkr.Spec.Version, tkr.Spec.Kubernetes.Version = "v1.35.4+vmware.1-tkg.1", "v1.35.4"
	tkr.Status.Conditions = runv1alpha3.Conditions{{Type: runv1alpha3.ConditionReady, Status: corev1.ConditionTrue}}
	path := filepath.Join(t.TempDir(), "wc.yaml")
	if err := os.WriteFile(path, []byte("CLUSTER_NAME: wc\nCLUSTER_PLAN: dev\nINFRASTRUCTURE_PROVIDER: local\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ custom, want, wantErr string }{
		{"127.0.0.1:5001/tkg", "- name: imageRepository\n      value:\n        host: 127.0.0.1:5001/tkg\n", ""},
		{"registry.example.com/tkg", "", "configuration validation failed: TKG_CUSTOM_IMAGE_REPOSITORY registry.example.com/tkg: its registry registry.example.com is not on this host's IPv4 loopback"},
	} {
		t.Run(tc.custom, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tkr.DeepCopy()).Build()
			var out, lines bytes.Buffer
			err := Create(t.Context(), CreateOptions{File: path, Environ: []string{"TKG_CUSTOM_IMAGE_REPOSITORY=" + tc.custom}, Client: c,
				Home: t.TempDir(), DryRun: true, Out: &out, Progress: progress.ForWriter(&lines)})
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, lines.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("the Cluster has no %q:\n%s", tc.want, out.String())
			}
		})
	}
}
