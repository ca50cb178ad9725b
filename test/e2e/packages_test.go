package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/client/managementcluster"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/registrytrust"
	"github.com/slipway-dev/slipway/internal/test/clitest"
	"github.com/slipway-dev/slipway/internal/test/testregistry"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// TestPackagesFromSources builds packages/ into bundles in the local registry with the same
// script as `make packages`, copies the repository with imgpkg into another registry on this
// host, empties slipway's registry of all but what a real node boots from, and installs packages
// from the copy with `slipway package` on a local cluster of real nodes running kapp-controller,
// the nodes pulling from the copy that TKG_CUSTOM_IMAGE_REPOSITORY names.
func TestPackagesFromSources(t *testing.T) {
	needRoot(t)
	_, repo := pushPackages(t)
	// A site without internet: the repository is copied with imgpkg into another registry, and
	// installed from there.
	copyRegistry := testregistry.StartOnEveryAddress(t)
	copied := relocate(t, repo, copyRegistry)
	// The TKR compatibility metadata goes beside it, as a site copies the catalogue: the
	// repository is read with it.
	registry, _, _ := strings.Cut(repo, "/")
	runImgpkg(t, "copy", "-b", registry+"/packages/tkr-compatibility:v1", "--to-repo", copyRegistry+"/relocated/tkr-compatibility", "--registry-insecure")
	keepOnlyNodeImages(t)
	relocated, _, _ := strings.Cut(copied, "@")
	t.Setenv("TKG_CUSTOM_IMAGE_REPOSITORY", copyRegistry+"/relocated")
	lc := createCluster(t, "e2e-sources")
	ctx := t.Context()
	pkg := packageCLI(t, lc, copied)
	pkg("package", "repository", "add", "slipway", "--url", copied, "-n", "tanzu-package-repo-global")
	out2 := pkg("package", "available", "list", "-n", "kube-system")
	if !clitest.LineHas(out2, "metrics-server.tanzu.vmware.com", "0.7.2+vmware.1-tkg.1") || !clitest.LineHas(out2, "kapp-controller.tanzu.vmware.com") {
		t.Fatalf("available list:\n%s", out2)
	}
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte("metricsServer:\n  config:\n    replicas: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pkg("package", "installed", "create", "metrics-server", "-p", "metrics-server.tanzu.vmware.com", "-v", "0.6.4+vmware.1-tkg.1", "-n", "kube-system", "-f", values)
	out2 = pkg("package", "installed", "list", "-A")
	if !clitest.LineHas(out2, "metrics-server", "0.6.4+vmware.1-tkg.1", "Reconcile succeeded", "kube-system") {
		t.Fatalf("installed list:\n%s", out2)
	}
	deploy := &appsv1.Deployment{}
	if err := lc.client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "metrics-server"}, deploy); err != nil {
		t.Fatal(err)
	}
	// The image is the copy of the package's placeholder, by digest.
	if deploy.Status.AvailableReplicas != 2 || !strings.HasPrefix(deploy.Spec.Template.Spec.Containers[0].Image, relocated+"@sha256:") {
		t.Fatalf("metrics-server: %d available, image %s", deploy.Status.AvailableReplicas, deploy.Spec.Template.Spec.Containers[0].Image)
	}
	kubectl := lc.kubectl(t)
	checkMetricsAPI(t, lc.client, kubectl)
	// Every core add-on installs with its default values, its workloads running on the nodes.
	addons := map[string]string{
		"antrea": "antrea.tanzu.vmware.com", "calico": "calico.tanzu.vmware.com", "vsphere-cpi": "vsphere-cpi.tanzu.vmware.com",
		"vsphere-csi": "vsphere-csi.tanzu.vmware.com", "secretgen-controller": "secretgen-controller.tanzu.vmware.com",
		"pinniped": "pinniped.tanzu.vmware.com", "tkg-storageclass": "tkg-storageclass.tanzu.vmware.com",
		// vSphere's management children: the resolver's webhook manager runs for real, AKO's
		// operator is simulated.
		"tkr-vsphere-resolver": "tkr-vsphere-resolver.tanzu.vmware.com", "ako-operator": "ako-operator-v2.tanzu.vmware.com",
	}
	for name, refName := range addons {
		pkg("package", "installed", "create", name, "-p", refName, "-v", ">=0.0.0", "-n", "tkg-system")
	}
	out2 = pkg("package", "installed", "list", "-n", "tkg-system")
	for name, refName := range addons {
		if !clitest.LineHas(out2, name, refName, "Reconcile succeeded") {
			t.Errorf("%s is not installed:\n%s", name, out2)
		}
	}
	resolver := &corev1.PodList{}
	if err := lc.client.List(ctx, resolver, client.InNamespace("tkg-system"), client.MatchingLabels{"app": "tkr-vsphere-resolver-webhook"}); err != nil {
		t.Fatal(err)
	}
	// Its image is named by the copy's repository only; the placeholder's config says which
	// component runs it.
	if len(resolver.Items) != 1 || !podReady(&resolver.Items[0]) {
		t.Errorf("tkr-vsphere-resolver's webhook manager is not one ready, real pod: %+v", resolver.Items)
	}
	pkg("package", "installed", "delete", "metrics-server", "-n", "kube-system", "-y")
	if err := lc.client.Get(ctx, client.ObjectKeyFromObject(deploy), deploy); err == nil {
		t.Fatal("metrics-server survives its uninstall")
	}
	// An APIService left behind with no server would fail every client's discovery.
	if out, err := kubectl("get", "apiservice", metricsAPIService); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("the Metrics API's APIService survives metrics-server's uninstall: %v\n%s", err, out)
	}
}

// metricsAPIService is the Metrics API's APIService, which metrics-server's package installs.
const metricsAPIService = "v1beta1.metrics.k8s.io"

// checkMetricsAPI checks what a user of metrics-server would: its APIService is Available and
// `kubectl top` shows every node's usage and the pods of kube-system, metrics-server's own
// among them (its kubelets scraped through the nodes' addresses on the bridge).
func checkMetricsAPI(t *testing.T, c client.Client, kubectl func(args ...string) (string, error)) {
	t.Helper()
	if out, err := kubectl("get", "apiservice", metricsAPIService, "-o",
		`jsonpath={.status.conditions[?(@.type=="Available")].status}`); err != nil || out != "True" {
		t.Fatalf("APIService %s is not Available (%v): %s", metricsAPIService, err, out)
	}
	nodes := &corev1.NodeList{}
	if err := c.List(t.Context(), nodes); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var top string
	// metrics-server has a node's usage once it has scraped its kubelet twice (--metric-resolution=15s).
	eventuallyExplained(t, 2*time.Minute, "kubectl top nodes shows every node", func() error {
		out, err := kubectl("top", "nodes", "--no-headers")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		for _, n := range nodes.Items {
			if !clitest.LineHas(out, n.Name, "m", "Mi") {
				return fmt.Errorf("no usage of node %s:\n%s", n.Name, out)
			}
		}
		top = out
		return nil
	}, func() {
		// Why metrics-server has no usage: its log says which kubelet it failed to scrape.
		out, err := kubectl("logs", "-n", "kube-system", "deployment/metrics-server", "--tail", "20")
		t.Logf("metrics-server's log (%v):\n%s", err, out)
	})
	eventually(t, time.Minute, "kubectl top pods shows metrics-server", func() error {
		out, err := kubectl("top", "pods", "-n", "kube-system", "--no-headers")
		if err != nil || !strings.Contains(out, "metrics-server-") {
			return fmt.Errorf("%v:\n%s", err, out)
		}
		return nil
	})
	t.Logf("kubectl top answered %s after metrics-server was Available:\n%s", time.Since(start).Round(100*time.Millisecond), top)
}

// keepOnlyNodeImages empties slipway's registry of everything but the images a real node boots
// from (pushNodeImages, at versions), as a site whose packages come from a copy elsewhere: what
// else a cluster runs must come from that copy. The registry is started again, on a new port.
func keepOnlyNodeImages(t *testing.T, versions ...string) {
	t.Helper()
	if out, err := runSlipway(t, "local", "registry", "stop"); err != nil {
		t.Fatalf("registry stop: %v\n%s", err, out)
	}
	if err := os.RemoveAll(filepath.Join(home, "registry", "data")); err != nil {
		t.Fatal(err)
	}
	pushNodeImages(t, startRegistry(t), versions...)
}

// startRegistry starts the local registry of the test's slipway home on a free loopback port,
// stopped when the test ends, and returns its address.
func startRegistry(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if out, err := runSlipway(t, "local", "registry", "start", "--address", addr); err != nil {
		t.Fatalf("registry start: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = runSlipwayContext(context.Background(), "local", "registry", "stop") })
	return addr
}

// pushPackages starts a local registry and builds packages/ into it with the same script as
// `make packages`; it returns the registry's address and the repository's reference.
func pushPackages(t *testing.T) (string, string) {
	t.Helper()
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	registry := startRegistry(t)
	script := exec.CommandContext(t.Context(), filepath.Join(root, "hack", "packages.sh"), registry, "v0.1.0")
	script.Env = append(os.Environ(), "SLIPWAY="+slipway)
	out, err := script.Output()
	if err != nil {
		t.Fatalf("hack/packages.sh: %v\n%s", err, out)
	}
	repo := strings.TrimSpace(string(out))
	if !strings.HasPrefix(repo, registry+"/packages/slipway-repo@sha256:") {
		t.Fatalf("the script printed %q, not the repository's reference", repo)
	}
	return registry, repo
}

// packageCLI installs kapp-controller on the cluster from the package repository repo, as
// management-cluster create does (its packaging global namespace tanzu-package-repo-global, as on
// a workload cluster), and returns a function that runs a slipway verb against it (`package ...`,
// `kubernetes-release ...`), retrying while the APIs it needs are not there yet, and failing the
// test on error.
func packageCLI(t *testing.T, lc *localCluster, repo string) func(args ...string) string {
	t.Helper()
	ctx := t.Context()
	r, err := managementcluster.ReadRepository(ctx, repo, registrytrust.Trust{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := progress.New(io.Discard, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := managementcluster.InstallKappController(ctx, lc.client, r, tkg.PackageRepoGlobalNamespace, 5*time.Minute, p); err != nil {
		t.Fatal(err)
	}
	t.Logf("kapp-controller running, its aggregated API available, %s after its deploy started", time.Since(start).Round(100*time.Millisecond))
	waitForReadyPod(t, lc, "tkg-system", "app=kapp-controller")
	kubeconfig := kubeconfigOf(t, lc)
	return func(args ...string) string {
		t.Helper()
		var out string
		var err error
		eventually(t, time.Minute, "slipway "+strings.Join(args, " "), func() error {
			out, err = runSlipway(t, append(args, "--kubeconfig", kubeconfig)...)
			if err != nil && (strings.Contains(out, "no matches for") || strings.Contains(out, "the server is currently unable to handle the request")) {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("slipway %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
}
