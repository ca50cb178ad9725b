package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/test/clitest"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

// checkManagementPackagesAndTKRService installs tkg-pkg from the package sources in registry on a
// local cluster running kapp-controller (run is packageCLI's): its children
// (tanzu-framework, tkr-service, tkr-source-controller, tanzu-addons-manager) reconcile, the TKR
// source fetches the default catalogue from the local registry, and the resolver webhook
// resolves and denies topology Clusters in the cluster.
func checkManagementPackagesAndTKRService(t *testing.T, lc *localCluster, run func(args ...string) string, registry, repo string) {
	ctx := t.Context()
	installClusterAPICRDs(t, lc)
	run("package", "repository", "add", "slipway", "--url", repo, "-n", "tanzu-package-repo-global")
	values := filepath.Join(t.TempDir(), "tkg-pkg.yaml")
	if err := os.WriteFile(values, []byte(fmt.Sprintf("tkrSourceController:\n  compatibilityImage: %[1]s/packages/tkr-compatibility\n"+
		"  tkrRepositoryImage: %[1]s/packages/tkr-repository\n  initialDiscoverFrequency: 2\n  continuousDiscoverFrequency: 5\n", registry)), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	run("package", "installed", "create", "tkg-pkg", "-p", "tkg.tanzu.vmware.com", "-v", "2.5.2", "-n", "tkg-system", "-f", values, "--wait")
	t.Cleanup(func() {
		if t.Failed() {
			dumpPods(t, lc, "tkg-system")
		}
	})
	eventually(t, 3*time.Minute, "the management packages", func() error {
		out := run("package", "installed", "list", "-n", "tkg-system")
		for _, name := range []string{"tkg-pkg", "tanzu-framework", "tkr-service", "tkr-source-controller", "tanzu-addons-manager"} {
			if !clitest.LineHas(out, name, "Reconcile succeeded") {
				return fmt.Errorf("%s has not reconciled:\n%s", name, out)
			}
		}
		return nil
	})
	t.Logf("tkg-pkg and its children reconciled in %s", time.Since(start).Round(100*time.Millisecond))

	// The management cluster's Cluster says which TKG it runs; the compatibility metadata lists
	// both releases for it.
	mgmt := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "tkg-system", Name: "mgmt",
		Labels: map[string]string{"cluster-role.tkg.tanzu.vmware.com/management": ""}, Annotations: map[string]string{"TKGVERSION": "v2.5.2"}}}
	mgmt.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane", Name: "mgmt"}
	if err := lc.client.Create(ctx, mgmt); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the catalogue", func() error {
		out := run("kubernetes-release", "get")
		for _, v := range []string{"v1.34.3", "v1.35.4"} {
			if !clitest.LineHas(out, v+"---vmware.1-tkg.1", v+"+vmware.1-tkg.1", "True", "True") {
				return fmt.Errorf("release %s is not listed compatible and active:\n%s", v, out)
			}
		}
		return nil
	})
	t.Logf("the catalogue was installed %s after tkg-pkg", time.Since(start).Round(100*time.Millisecond))
	if out := run("kubernetes-release", "os", "get", "v1.35.4---vmware.1-tkg.1"); !clitest.LineHas(out, "local", "host", "amd64", "local") ||
		!clitest.LineHas(out, "ubuntu", "2004", "amd64", "ova") || !clitest.LineHas(out, "photon", "3", "amd64", "ova") {
		t.Fatalf("os get:\n%s", out)
	}

	newCluster := func(name, version string) *clusterv1.Cluster {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
			Annotations: map[string]string{"run.tanzu.vmware.com/resolve-tkr": ""}}}
		c.Spec.Topology.ClassRef.Name = "tkg-local-default"
		c.Spec.Topology.Version = version
		c.Spec.Topology.ControlPlane.Metadata.Annotations = map[string]string{"run.tanzu.vmware.com/resolve-os-image": "image-type=local"}
		return c
	}
	t.Run("the resolver webhook resolves a version prefix", func(t *testing.T) {
		c := newCluster("wl", "v1.34")
		// The webhook's caBundle is set by the component once it runs.
		eventually(t, time.Minute, "creating a Cluster through the resolver", func() error { return lc.client.Create(ctx, c) })
		if got := c.Labels["run.tanzu.vmware.com/tkr"]; got != "v1.34.3---vmware.1-tkg.1" || c.Spec.Topology.Version != "v1.34.3+vmware.1" {
			t.Fatalf("resolved to TKR %q, version %q", got, c.Spec.Topology.Version)
		}
		eventually(t, time.Minute, "UpdatesAvailable", func() error {
			out, err := runSlipway(t, "kubernetes-release", "available-upgrades", "get", "wl", "--cluster", "--kubeconfig", kubeconfigOf(t, lc))
			if err != nil || !clitest.LineHas(out, "v1.35.4---vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1") {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		})
		// TKG's form: the upgrades of the release the cluster resolved to.
		out, err := runSlipway(t, "kubernetes-release", "available-upgrades", "get", "v1.34.3---vmware.1-tkg.1", "--kubeconfig", kubeconfigOf(t, lc))
		if err != nil || !clitest.LineHas(out, "v1.35.4---vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1") {
			t.Errorf("available-upgrades get v1.34.3---vmware.1-tkg.1: %v\n%s", err, out)
		}
	})
	t.Run("the resolver denies with what was asked and why each release was rejected", func(t *testing.T) {
		err := lc.client.Create(ctx, newCluster("nothing", "v1.99"))
		if err == nil || !strings.Contains(err.Error(), "could not resolve a TKR") || !strings.Contains(err.Error(), "v1.34.3---vmware.1-tkg.1: control plane: version v1.34.3+vmware.1-tkg.1 does not match v1.99") {
			t.Fatalf("denial: %v", err)
		}
		run("kubernetes-release", "deactivate", "v1.35.4---vmware.1-tkg.1")
		// The release is active again for the next steps, whatever this one finds.
		defer run("kubernetes-release", "activate", "v1.35.4---vmware.1-tkg.1")
		// The webhook reads the releases from its cache, which sees the deactivation a moment
		// after the command ends (CI once created a Cluster in between): a Cluster it let
		// through is deleted and another one, of another name, asked for.
		attempt := 0
		eventually(t, 30*time.Second, "denial of a deactivated release", func() error {
			attempt++
			c := newCluster(fmt.Sprintf("deactivated-%d", attempt), "v1.35")
			err := lc.client.Create(ctx, c)
			if err == nil {
				_ = lc.client.Delete(ctx, c)
				return fmt.Errorf("Cluster %s was let through on the deactivated release", c.Name)
			}
			if !strings.Contains(err.Error(), "v1.35.4---vmware.1-tkg.1: deactivated") {
				return fmt.Errorf("the denial does not say the release is deactivated: %v", err)
			}
			return nil
		})
	})
	t.Run("compatibility follows TKGVERSION", func(t *testing.T) {
		patch := client.MergeFrom(mgmt.DeepCopy())
		mgmt.Annotations["TKGVERSION"] = "v9.0.0"
		if err := lc.client.Patch(ctx, mgmt, patch); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "incompatible releases", func() error {
			out := run("kubernetes-release", "get", "-a")
			if !clitest.LineHas(out, "v1.35.4---vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1", "False", "True") {
				return fmt.Errorf("v1.35.4 is still compatible:\n%s", out)
			}
			return nil
		})
	})
}

// kubeconfigOf writes the cluster's kubeconfig into a temporary file.
func kubeconfigOf(t *testing.T, lc *localCluster) string {
	t.Helper()
	cfg, err := runSlipway(t, "local", "cluster", "kubeconfig", lc.name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// installClusterAPICRDs creates Cluster API's Cluster and ClusterClass CRDs, as clusterctl init
// does before the management packages are installed.
func installClusterAPICRDs(t *testing.T, lc *localCluster) {
	t.Helper()
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	capi, err := envtest.ModuleDir(root, "sigs.k8s.io/cluster-api")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"cluster.x-k8s.io_clusters.yaml", "cluster.x-k8s.io_clusterclasses.yaml"} {
		data, err := os.ReadFile(filepath.Join(capi, "config", "crd", "bases", f))
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatal(err)
		}
		if err := lc.client.Create(t.Context(), crd); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "Cluster API CRDs", func() error {
		return lc.client.List(t.Context(), &clusterv1.ClusterList{})
	})
}

// dumpPods logs the pods of a namespace of lc that are not ready (see dumpPodsOf).
func dumpPods(t *testing.T, lc *localCluster, namespace string) {
	t.Helper()
	dumpPodsOf(t, lc.cs, namespace)
}

// dumpPodsOf logs every pod of a namespace ("" for all) that is not ready, with the events about
// it and the tail of each container's log, and how many are ready, to say why a package does not
// reconcile. It runs in cleanups, where t.Context is done: its reads use context.Background.
func dumpPodsOf(t *testing.T, cs kubernetes.Interface, namespace string) {
	t.Helper()
	ctx := context.Background()
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("listing pods: %v", err)
		return
	}
	ready := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if podReady(p) || p.Status.Phase == corev1.PodSucceeded {
			ready++
			continue
		}
		t.Logf("pod %s/%s on %q: phase %s, not ready", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase)
		events, err := cs.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + p.Name})
		if err == nil {
			for _, e := range events.Items {
				// The scheduler's events (events.k8s.io) set eventTime, not lastTimestamp.
				at := e.LastTimestamp.Time
				if at.IsZero() {
					at = e.EventTime.Time
				}
				t.Logf("  %s %s %s (x%d)", at.Format(time.TimeOnly), e.Reason, e.Message, max(e.Count, 1))
			}
		}
		tail := int64(15)
		for _, c := range p.Spec.Containers {
			logs, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, TailLines: &tail}).DoRaw(ctx)
			t.Logf("  the log of its container %s (%v):\n%s", c.Name, err, logs)
		}
	}
	t.Logf("%d of %d pods of %s ready", ready, len(pods.Items), namespace)
}
