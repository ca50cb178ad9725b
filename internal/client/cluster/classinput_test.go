package cluster

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// TestCreateFromAClusterClassFile checks that cluster create takes TKG 2.x's input, a
// ClusterClass Cluster with the objects it needs (the very file it saves under clusterconfigs/):
// the objects are created in order with TKG's operation record, a Cluster without a class is
// refused with TKG's words, and the host is asked for the nodes of a local cluster.
func TestCreateFromAClusterClassFile(t *testing.T) {
	tkr := &runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: "v1.35.4---vmware.1-tkg.1"}}
	tkr.Spec.Version, tkr.Spec.Kubernetes.Version = "v1.35.4+vmware.1-tkg.1", "v1.35.4+vmware.1"
	tkr.Status.Conditions = runv1alpha3.Conditions{{Type: runv1alpha3.ConditionReady, Status: corev1.ConditionTrue}}
	class := &clusterv1.ClusterClass{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tkg-local-default-v1.0.0"}}
	class.Spec.Infrastructure.TemplateRef = clusterv1.ClusterClassTemplateReference{Kind: "LocalClusterTemplate", Name: "t", APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2"}
	newClient := func() client.Client {
		return fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tkr, class).Build()
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// The flat file's conversion, as create saves it.
	flat := write("flat.yaml", "CLUSTER_NAME: wc\nCLUSTER_PLAN: prod\nINFRASTRUCTURE_PROVIDER: local\nCNI: calico\nWORKER_MACHINE_COUNT: 3\n")
	var saved bytes.Buffer
	if err := Create(t.Context(), CreateOptions{File: flat, Client: newClient(), Home: dir, DryRun: true, Out: &saved,
		Progress: progress.ForWriter(&bytes.Buffer{})}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(saved.String(), "kind: ClusterBootstrap") {
		t.Fatalf("the conversion has no ClusterBootstrap to carry:\n%s", saved.String())
	}
	input := write("wc.yaml", saved.String())

	t.Run("the saved file creates the cluster", func(t *testing.T) {
		c := newClient()
		var asked [2]int
		var lines bytes.Buffer
		err := Create(t.Context(), CreateOptions{File: input, Client: c, Home: dir, Out: &bytes.Buffer{}, Progress: progress.ForWriter(&lines),
			Timeout: 10 * time.Millisecond, Now: time.Now, CheckHost: func(_ *progress.Printer, cp, w int) error { asked = [2]int{cp, w}; return nil }})
		// No controller runs here: the first wait times out once everything is created.
		if err == nil || !strings.Contains(err.Error(), "was not initialized") {
			t.Fatalf("got %v\n%s", err, lines.String())
		}
		// Its objects are made: the ways out name the cluster.
		if want := "To see where it is:\n    slipway cluster get wc -n default\nTo delete it:\n    slipway cluster delete wc -n default"; !strings.Contains(err.Error(), want) {
			t.Errorf("a create that stopped after its objects were made does not give its ways out:\n%v", err)
		}
		if !strings.Contains(lines.String(), "creating workload cluster 'wc'...") || strings.Contains(lines.String(), "Legacy configuration file detected") {
			t.Errorf("lines:\n%s", lines.String())
		}
		if asked != [2]int{3, 3} {
			t.Errorf("the host was asked for %v, want the prod plan's 3 control-plane nodes and 3 workers", asked)
		}
		got := &clusterv1.Cluster{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "wc"}, got); err != nil {
			t.Fatal(err)
		}
		if got.Annotations[tkg.AnnotationOperationInfo] == "" || got.Spec.Topology.ClassRef.Name == "" {
			t.Errorf("the Cluster: annotations %v, class %q", got.Annotations, got.Spec.Topology.ClassRef.Name)
		}
		cb := &runv1alpha3.ClusterBootstrap{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "wc"}, cb); err != nil {
			t.Errorf("the ClusterBootstrap: %v", err)
		}
		// The same file again: the name is taken.
		err = Create(t.Context(), CreateOptions{File: input, Client: c, Home: dir, Progress: progress.ForWriter(&bytes.Buffer{})})
		if err == nil || !strings.Contains(err.Error(), "cluster with name wc already exists, please specify another name") {
			t.Errorf("a second create: %v", err)
		}
	})

	t.Run("--tkr moves the Cluster and its ClusterBootstrap to the release", func(t *testing.T) {
		older := tkr.DeepCopy()
		older.Name, older.Spec.Version, older.Spec.Kubernetes.Version = "v1.34.3---vmware.1-tkg.1", "v1.34.3+vmware.1-tkg.1", "v1.34.3+vmware.1"
		c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tkr, older, class).Build()
		var out bytes.Buffer
		if err := Create(t.Context(), CreateOptions{File: input, Client: c, Home: dir, DryRun: true, Out: &out, TKR: "v1.34",
			Progress: progress.ForWriter(&bytes.Buffer{})}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "version: v1.34.3+vmware.1-tkg.1\n") || !strings.Contains(out.String(), "add-missing-fields-from-tkr: v1.34.3---vmware.1-tkg.1") ||
			strings.Contains(out.String(), "v1.35.4") {
			t.Errorf("not moved to v1.34.3:\n%s", out.String())
		}
	})

	// A create whose objects are refused part-way gives the ways out only once the Cluster is
	// made: its controllers go on with it.
	t.Run("a refused object gives the ways out once the Cluster is made", func(t *testing.T) {
		for _, tc := range []struct {
			refused string
			waysOut bool
		}{{"Cluster", false}, {"ClusterBootstrap", true}} {
			c := interceptor.NewClient(newClient().(client.WithWatch), interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
					if kind, _ := c.GroupVersionKindFor(o); kind.Kind == tc.refused {
						return errors.New("refused by an admission webhook")
					}
					return c.Create(ctx, o, opts...)
				},
			})
			err := Create(t.Context(), CreateOptions{File: input, Client: c, Home: t.TempDir(), Progress: progress.ForWriter(&bytes.Buffer{}), Timeout: 10 * time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), `step "create objects" failed: failed to create `+tc.refused) {
				t.Fatalf("%s refused: got %v", tc.refused, err)
			}
			if got := strings.Contains(err.Error(), "slipway cluster delete wc -n default"); got != tc.waysOut {
				t.Errorf("%s refused: ways out given %t, want %t:\n%v", tc.refused, got, tc.waysOut, err)
			}
		}
	})

	t.Run("the host refuses", func(t *testing.T) {
		err := Create(t.Context(), CreateOptions{File: input, Client: newClient(), Home: dir, Progress: progress.ForWriter(&bytes.Buffer{}),
			CheckHost: func(*progress.Printer, int, int) error {
				return errors.New("this host cannot start 4 more nodes")
			}})
		if err == nil || !strings.Contains(err.Error(), "cannot start 4 more nodes") {
			t.Errorf("got %v", err)
		}
	})

	for _, tc := range []struct{ name, file, want string }{
		{"no class", "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: wc\nspec:\n  clusterNetwork: {}\n", errNoClass},
		{"empty class", "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: wc\nspec:\n  topology:\n    class: \"\"\n    version: v1.35.4\n", errEmptyClass},
		{"no Cluster", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: wc\n", "holds Kubernetes objects but no Cluster"},
		{"another name", saved.String(), "differs from the Cluster's name wc"},
		{"flags", saved.String(), "the flags that set CLUSTER_PLAN, WORKER_MACHINE_COUNT do not apply to a ClusterClass file"},
		{"a bad second document", saved.String() + "---\nfoo: [\n", "document 3 is not YAML"},
		{"a second document not an object", saved.String() + "---\nCLUSTER_NAME: x\n", "document 3 is not a Kubernetes object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient()
			o := CreateOptions{File: write(tc.name+".yaml", tc.file), Client: c, Home: dir, Progress: progress.ForWriter(&bytes.Buffer{})}
			switch tc.name {
			case "another name":
				o.Name = "other"
			case "flags":
				o.Set = map[string]string{"WORKER_MACHINE_COUNT": "5", "CLUSTER_PLAN": "dev"}
			}
			err := Create(t.Context(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if list := (&clusterv1.ClusterList{}); c.List(t.Context(), list) != nil || len(list.Items) > 0 {
				t.Errorf("a refused file created a Cluster")
			}
		})
	}
}

// TestMissingFileNamesTheFlag: a -f file that is not there is refused naming the flag.
func TestMissingFileNamesTheFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	if _, _, err := readObjects(path); err == nil || err.Error() != "--file (-f): open "+path+": no such file or directory" {
		t.Errorf("readObjects of a missing file: %v", err)
	}
}
