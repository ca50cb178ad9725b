package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/hostlimits"
	"github.com/slipway-dev/slipway/internal/local/vm"
	"github.com/slipway-dev/slipway/internal/scheme"
	"github.com/slipway-dev/slipway/internal/statedir"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

// slipway is the binary under test, built once; home is its state directory; clusterctlBin is
// upstream's, built from hack/tools/clients; kappBin and imgpkgBin are Carvel's, built from
// hack/tools/carvel; kubectlBin is upstream's of the default Kubernetes version, which `make
// assets` builds.
var (
	slipway       string
	home          string
	clusterctlBin string
	kappBin       string
	imgpkgBin     string
	kubectlBin    string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := assets.SourceRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	set := assets.Set{Dir: filepath.Join(root, "bin")}
	if _, err := set.Kubernetes(assets.DefaultKubernetesVersion(), assets.KubeAPIServer); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "slipway-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	slipway = filepath.Join(tmp, "slipway")
	build := exec.Command("go", "build", "-o", slipway, "./cmd/slipway")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: failed to build slipway: %v\n%s", err, out)
		return 1
	}
	// Upstream clusterctl, built as a user would install it, reads slipway's clusters.
	clusterctlBin = filepath.Join(tmp, "clusterctl")
	build = exec.Command("go", "build", "-o", clusterctlBin, "sigs.k8s.io/cluster-api/cmd/clusterctl")
	build.Dir = filepath.Join(root, "hack", "tools", "clients")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: failed to build clusterctl: %v\n%s", err, out)
		return 1
	}
	// Carvel's kapp and imgpkg, as users build them, read what slipway's packaging writes.
	kappBin, imgpkgBin = filepath.Join(tmp, "kapp"), filepath.Join(tmp, "imgpkg")
	build = exec.Command("go", "build", "-o", tmp, "carvel.dev/kapp/cmd/kapp", "carvel.dev/imgpkg/cmd/imgpkg")
	build.Dir = filepath.Join(root, "hack", "tools", "carvel")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: failed to build kapp and imgpkg: %v\n%s", err, out)
		return 1
	}
	if kubectlBin, err = set.Kubernetes(assets.DefaultKubernetesVersion(), "kubectl"); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	home = filepath.Join(tmp, "home")
	// Nodes of namespaces another run or package left would take addresses this suite expects:
	// say so where a failure's log is read.
	for k, v := range vm.OnHost() {
		fmt.Fprintf(os.Stderr, "e2e: before the suite, the host holds %s (%s)\n", k, v)
	}
	// The suite runs many clusters on one host at a time, as a user who lets slipway raise the
	// kernel's limits does (Debian's default of 128 inotify instances fits about eight).
	os.Setenv(hostlimits.RaiseEnv, "true")
	os.Setenv(statedir.Env, home)
	os.Setenv(assets.DirEnv, set.Dir)
	os.Setenv("KUBECONFIG", filepath.Join(tmp, "kubeconfig"))
	return m.Run()
}

// runSlipway runs the binary and returns its combined output.
func runSlipway(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runSlipwayContext(t.Context(), args...)
}

// slipwayOutput runs the binary in dir (the test's own when empty) and returns what it printed
// on stdout, the JSON or YAML a test parses, apart from the notices it prints on stderr (such as
// which of several management clusters it chose); a failure's error holds stderr.
func slipwayOutput(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, slipway, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return stdout.String(), nil
}

// runSlipwayContext runs the binary under ctx; cleanups use it, as t.Context is done by then.
func runSlipwayContext(parent context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(parent, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, slipway, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// localCluster is a cluster created for a test and deleted after it.
type localCluster struct {
	name   string
	dirs   cluster.Dirs
	config *rest.Config
	client client.Client
	cs     *kubernetes.Clientset
	// created is what `slipway local cluster create` printed.
	created string
	// kubeconfig is the file of what `slipway local cluster kubeconfig` printed.
	kubeconfig string
}

func createCluster(t *testing.T, name string, args ...string) *localCluster {
	t.Helper()
	start := time.Now()
	out, err := runSlipway(t, append([]string{"local", "cluster", "create", name}, args...)...)
	if err != nil {
		t.Fatalf("create %s failed: %v\n%s", name, err, out)
	}
	t.Logf("created %s in %s:\n%s", name, time.Since(start).Round(100*time.Millisecond), out)
	for _, line := range []string{"Ensuring node image", "Preparing nodes", "Writing configuration", "Starting control-plane",
		"Installing CNI", "Installing StorageClass", "Waiting 2m0s for control-plane = Ready", "Ready after"} {
		if !strings.Contains(out, line) {
			t.Errorf("create output lacks %q", line)
		}
	}
	store := cluster.Store{Root: filepath.Join(home, "local")}
	dirs, err := store.Dirs(name)
	if err != nil {
		t.Fatal(err)
	}
	lc := &localCluster{name: name, dirs: dirs, created: out, kubeconfig: localKubeconfig(t, name)}
	kubeconfig, err := os.ReadFile(lc.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	clients := clientsFor(t, kubeconfig)
	lc.config, lc.client, lc.cs = clients.config, clients.client, clients.cs
	t.Cleanup(func() {
		if _, err := os.Stat(lc.dirs.Root); err == nil {
			if out, err := runSlipwayContext(context.Background(), "local", "cluster", "delete", name); err != nil {
				t.Errorf("delete %s: %v\n%s", name, err, out)
			}
		}
	})
	return lc
}

// kubectl returns a runner of upstream kubectl on the cluster.
func (lc *localCluster) kubectl(t *testing.T) func(args ...string) (string, error) {
	return kubectlOn(t, lc.kubeconfig)
}

// localKubeconfig writes the kubeconfig `local cluster kubeconfig NAME` prints to a file of the
// test's, and returns its path.
func localKubeconfig(t *testing.T, name string) string {
	t.Helper()
	out, err := runSlipway(t, "local", "cluster", "kubeconfig", name)
	if err != nil {
		t.Fatalf("kubeconfig: %v\n%s", err, out)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// kubectlOn returns a runner of upstream kubectl with a kubeconfig file, its output combined.
func kubectlOn(t *testing.T, kubeconfig string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		b, err := exec.CommandContext(t.Context(), kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
		return string(b), err
	}
}

// clientsFor makes the clients of the cluster a kubeconfig names.
func clientsFor(t *testing.T, kubeconfig []byte) *localCluster {
	t.Helper()
	var lc localCluster
	var err error
	if lc.config, err = clientcmd.RESTConfigFromKubeConfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if lc.client, err = client.New(lc.config, client.Options{Scheme: scheme.New()}); err != nil {
		t.Fatal(err)
	}
	if lc.cs, err = kubernetes.NewForConfig(lc.config); err != nil {
		t.Fatal(err)
	}
	return &lc
}

// eventually polls f until it returns nil or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	envtest.Eventually(t, timeout, what, f)
}

// eventuallyExplained is eventually, calling explain before a timeout fails the test: what to
// log of a failure that the check's own error does not say.
func eventuallyExplained(t *testing.T, timeout time.Duration, what string, f func() error, explain func()) {
	t.Helper()
	passed := false
	defer func() {
		if !passed {
			explain()
		}
	}()
	eventually(t, timeout, what, f)
	passed = true
}

// phase runs one phase of a long flow as a subtest, so that a failure names its phase and a
// phase can be run alone with -run; a failed phase ends the flow, since the phases after it need
// what it was to make.
func phase(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, f) {
		t.FailNow()
	}
}

// needPhase fails a phase run without the earlier phase that makes what it uses (made is false),
// naming that phase.
func needPhase(t *testing.T, made bool, maker string) {
	t.Helper()
	if !made {
		t.Fatalf("this phase needs what the phase %q makes: run that one too", maker)
	}
}
