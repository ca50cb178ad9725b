package config

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from what the conversion makes")

// goldenCases are the flat files of testdata/ and the role each is created as.
var goldenCases = []struct {
	file string
	role Role
}{
	{"local-dev.yaml", Workload},
	{"local-prod.yaml", Workload},
	{"local-management.yaml", Management},
	{"vsphere-dev.yaml", Management},
	{"vsphere-prod.yaml", Workload},
	{"vsphere-nodes.yaml", Workload},
	{"local-cni-none.yaml", Workload},
}

const goldenTKR = "v1.35.4---vmware.1-tkg.1"

// TestConversionGolden converts each flat file of testdata/ into what would be applied (the
// vSphere credentials Secret, the Cluster, its ClusterBootstrap) and compares it, with the
// notes, to testdata/*.golden. Rewrite them with `go test ./internal/config -update`.
func TestConversionGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.file, func(t *testing.T) {
			c := completeFile(t, tc.file, tc.role)
			var out bytes.Buffer
			for _, n := range c.Notes {
				out.WriteString("# Note: " + n + "\n")
			}
			out.Write(manifests(t, c.Objects(goldenTKR)...))
			golden := filepath.Join("testdata", strings.TrimSuffix(tc.file, ".yaml")+".golden")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (write it with -update)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("%s differs from what the conversion makes (rewrite it with -update if the change is meant):\n%s", golden, out.String())
			}
		})
	}
}

func completeFile(t *testing.T, file string, role Role) *Cluster {
	t.Helper()
	v, err := Read(filepath.Join("testdata", file), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Complete(v, role, defaults, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// manifests is the objects' YAML as a user applies it: each after "---", without status or an
// empty creationTimestamp.
func manifests(t *testing.T, objs ...client.Object) []byte {
	t.Helper()
	var out []byte
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "status")
		if meta, ok := m["metadata"].(map[string]any); ok {
			delete(meta, "creationTimestamp")
		}
		if data, err = yaml.Marshal(m); err != nil {
			t.Fatal(err)
		}
		out = append(append(out, "---\n"...), data...)
	}
	return out
}
