package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cniv1alpha1 "github.com/slipway-dev/slipway/api/cni/v1alpha1"
	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/assets"
	clusterclient "github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/local/vm"
	"github.com/slipway-dev/slipway/internal/scheme"
	"github.com/slipway-dev/slipway/internal/test/clitest"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// TestManagementClusterCreate runs `slipway management-cluster create` from a flat
// configuration file as seeds/000 does: a bootstrap cluster with the payload, the management
// Cluster, the payload on it, clusterctl move, the bootstrap cluster deleted. The management
// cluster then manages itself: its own provider, in a container on one of its nodes, makes and
// deletes this host's nodes through the store's node service, scales its workers and starts a
// killed load balancer again. It is made as a site without internet makes it, from an imgpkg
// copy of the packages and images in another registry on this host (TKG_CUSTOM_IMAGE_REPOSITORY;
// slipway's registry keeps only what a node boots from), at v1.34.3 with an OIDC identity
// provider, which its pinniped gets, runs a workload cluster's whole life, and is upgraded to
// v1.35 by `management-cluster upgrade` before its delete. Every node of it, of its bootstrap, workload
// and cleanup clusters, is real (the default, nothing said of the nodes): the fault suite of
// real nodes runs on it and on its workload cluster (checkRealNodeFaults), and the upgrades roll
// real nodes, whose kubeadm joins each new one at the new version. It is the package's one
// management cluster of the local provider; the installer makes one on the vCenter simulator
// (TestVSphereFlows).
func TestManagementClusterCreate(t *testing.T) {
	needRoot(t)
	addr, repo := pushPackages(t)
	// The management and workload clusters start at v1.34.3 and are upgraded to v1.35.4.
	pushNodeImages(t, addr, "v1.34.3", "v1.35.4")
	beforeNodes := vm.OnHost()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	store := cluster.Store{Root: filepath.Join(home, "local")}
	before, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deleteAddedClusters(t, store, before)
		checkNoRealNodeLeft(t, beforeNodes)
	})

	// Each phase after create needs what the ones before it made: a failed phase ends the test.
	file := write("mgmt.yaml", "CLUSTER_NAME: e2e-mgmt\nCLUSTER_PLAN: dev\nINFRASTRUCTURE_PROVIDER: local\n"+
		"CONTROL_PLANE_MACHINE_COUNT: 1\nWORKER_MACHINE_COUNT: 1\nKUBERNETES_VERSION: v1.34.3\n"+
		"IDENTITY_MANAGEMENT_TYPE: oidc\nOIDC_IDENTITY_PROVIDER_ISSUER_URL: https://login.example.com/oauth2\n"+
		"OIDC_IDENTITY_PROVIDER_CLIENT_ID: slipway\nOIDC_IDENTITY_PROVIDER_CLIENT_SECRET: s3cret\n")

	// The refusals and failures before the create stand alone.
	t.Run("refusals before anything starts", func(t *testing.T) {
		// Bad configuration fails before anything starts, naming the variable.
		for content, want := range map[string]string{
			"CLUSTER_NAME: m2\nCONTROL_PLANE_MACHINE_COUNT: 2\n": "invalid CONTROL_PLANE_MACHINE_COUNT 2",
			"CLUSTER_NAME: m2\nCLUSTER_CIDR: 100.96.0.0/33\n":    `invalid CLUSTER_CIDR "100.96.0.0/33"`,
			"CLUSTER_NAME: Bad_Name\n":                           `invalid CLUSTER_NAME "Bad_Name"`,
			"CLUSTER_NAME: m2\nCLUSTER_PLAN: huge\n":             `invalid CLUSTER_PLAN "huge": use dev or prod`,
			"CLUSTER_NAME: m2\nLOCAL_NODE_RUNTIME: agent\n":      `invalid LOCAL_NODE_RUNTIME "agent": the node agent is retired`,
			"CLUSTER_NAME: m2\nKUBERNETES_VERSION: v1.20.0\n":    `invalid KUBERNETES_VERSION "v1.20.0" for the local infrastructure provider: the local runtime runs v1.35.4, v1.34.3`,
		} {
			out, err := runSlipway(t, "management-cluster", "create", "-f", write("bad.yaml", content), "--package-repository", repo)
			if err == nil || !strings.Contains(out, want) || !strings.Contains(out, "configuration validation failed") {
				t.Errorf("%q: want a failure saying %q, got %v:\n%s", content, want, err, out)
			}
			if after, _ := store.List(); len(after) != len(before) {
				t.Errorf("%q: a local cluster was made before the configuration was checked", content)
			}
		}

		// So does a package repository that cannot be read, naming it.
		out, err := runSlipway(t, "management-cluster", "create", "--name", "m2", "--package-repository", "127.0.0.1:5000/packages/nope:v9")
		if err == nil || !strings.Contains(out, "configuration validation failed") || !strings.Contains(out, "127.0.0.1:5000/packages/nope:v9") {
			t.Errorf("an unreadable package repository: want a failure naming it, got %v:\n%s", err, out)
		}
		if after, _ := store.List(); len(after) != len(before) {
			t.Errorf("a local cluster was made before the package repository was read")
		}

		// --dry-run prints the management Cluster and its ClusterBootstrap, and starts nothing.
		out, err = runSlipway(t, "management-cluster", "create", "-f", file, "--package-repository", repo, "--dry-run")
		if err != nil || !strings.Contains(out, "kind: Cluster\n") || !strings.Contains(out, "kind: ClusterBootstrap\n") ||
			!strings.Contains(out, "tkg.tanzu.vmware.com/add-missing-fields-from-tkr: v1.34.3---vmware.1-tkg.1") {
			t.Fatalf("--dry-run: %v\n%s", err, out)
		}
		if after, _ := store.List(); len(after) != len(before) {
			t.Fatalf("--dry-run made a local cluster")
		}

	})

	t.Run("failed and interrupted creates clean up", func(t *testing.T) {
		// A step that fails says which, why, where the log is and the two ways out; the cleanup
		// command it names removes what the run made.
		out, err := runSlipwayTimeout(t, 5*time.Minute, "management-cluster", "create", "--name", "e2e-fail", "--package-repository", repo, "-t", "1s")
		if err == nil {
			t.Fatalf("a create whose waits may take 1s succeeded:\n%s", out)
		}
		for _, want := range []string{`unable to set up management cluster: step "bootstrap cluster" failed: `, "To resume with the kept bootstrap cluster:",
			"slipway management-cluster create -e --kubeconfig ", "To clean up the bootstrap cluster and what it made:", "The full log is "} {
			if !strings.Contains(out, want) {
				t.Errorf("the failure lacks %q:\n%s", want, out)
			}
		}
		cleanup := regexp.MustCompile("slipway local cluster delete (tkg-kind-[a-z0-9]+)").FindStringSubmatch(out)
		logFile := regexp.MustCompile(`The full log is (\S+)`).FindStringSubmatch(out)
		if cleanup == nil || logFile == nil {
			t.Fatalf("the failure names no cleanup command or log:\n%s", out)
		}
		if _, err := os.Stat(logFile[1]); err != nil {
			t.Errorf("the log file it names: %v", err)
		}
		if o, err := runSlipway(t, "local", "cluster", "delete", cleanup[1]); err != nil {
			t.Fatalf("the cleanup command: %v\n%s", err, o)
		}
		if after, _ := store.List(); len(after) != len(before) {
			t.Errorf("the cleanup command left %d local clusters, %d before", len(after), len(before))
		}

		// Ctrl-C stops a run cleanly, with the same message; a bootstrap cluster killed under a
		// run is named within a minute instead of waited on until -t. The two runs go side by
		// side, as two users' would: each takes its own block of the bridge.
		// At -v 1 the wait for the control plane says when it has started.
		waiting := "control plane is not available yet, retrying"
		t.Run("side by side", func(t *testing.T) {
			t.Run("interrupted", func(t *testing.T) {
				t.Parallel()
				out := interruptedCreate(t, waiting, func(cmd *exec.Cmd, _ string) {
					if err := cmd.Process.Signal(os.Interrupt); err != nil {
						t.Fatal(err)
					}
				}, "--name", "e2e-int", "--package-repository", repo, "-v", "1")
				checkFailureCleanedUp(t, out, "control plane", "interrupted while waiting", store)
			})
			t.Run("its bootstrap cluster killed", func(t *testing.T) {
				t.Parallel()
				out := interruptedCreate(t, waiting, func(_ *exec.Cmd, bootstrap string) {
					killCluster(t, store, bootstrap)
				}, "--name", "e2e-kill", "--package-repository", repo, "-v", "1")
				checkFailureCleanedUp(t, out, "control plane", "has not answered for 30s", store)
			})
		})
		if after, _ := store.List(); len(after) != len(before) {
			t.Errorf("the interrupted runs left %d local clusters, %d before", len(after), len(before))
		}

	})

	// The management cluster is made as a site without internet makes it: from a copy of
	// everything in another registry on this host, which TKG_CUSTOM_IMAGE_REPOSITORY names, with
	// no --package-repository (the repository is the copy's slipway-repo:v0.1.0). The workload
	// clusters below pull from the copy too.
	site := copyForASite(t, addr, "v1.34.3", "v1.35.4")

	// Create, checked in the test itself, so that any phase can run alone with it.
	start := time.Now()
	out, err := runSlipwayTimeout(t, 20*time.Minute, "management-cluster", "create", "-f", file, "-t", "10m")
	t.Logf("management-cluster create took %s:\n%s", time.Since(start).Round(time.Second), out)
	if err != nil {
		t.Fatalf("management-cluster create failed: %v", err)
	}
	last := -1
	for _, line := range []string{
		"Validating the pre-requisites...",
		"Setting up management cluster...",
		"Setting up bootstrapper...",
		"Installing kapp-controller on bootstrap cluster...",
		"Installing providers on bootstrapper...",
		"Bootstrapper created. Kubeconfig: ",
		"Management cluster config file has been generated and stored at: '",
		"Checking Tkr v1.34.3---vmware.1-tkg.1 in bootstrap cluster...",
		"Start creating management cluster...",
		"Management cluster control plane is available, means API server is ready to receive requests",
		"Saving management cluster kubeconfig into ",
		"Installing kapp-controller on management cluster...",
		"Installing providers on management cluster...",
		"Waiting for the management cluster to get ready for move...",
		"Applying ClusterBootstrap and its associated resources on management cluster",
		"Moving all Cluster API objects from bootstrap cluster to management cluster...",
		"Performing move...",
		"Discovering Cluster API objects",
		"Moving Cluster API objects Clusters=1",
		"Deleting objects from the source cluster",
		"Verified the move: the management cluster holds the ",
		"Waiting for the management cluster to manage itself...",
		"Creating tkg-bom versioned ConfigMaps...",
		"You can now access the management cluster e2e-mgmt by running 'kubectl config use-context e2e-mgmt-admin@e2e-mgmt'",
		"Deleting kind cluster: tkg-kind-",
		"Management cluster created!",
		"Steps:",
	} {
		i := strings.Index(out, line)
		if i < 0 {
			t.Errorf("the output lacks %q", line)
			continue
		}
		if i < last {
			t.Errorf("%q comes too early in the output", line)
		}
		last = i
	}
	for _, noise := range []string{"client-side throttling", "Waited before sending request", "Ensuring node image"} {
		if strings.Contains(out, noise) {
			t.Errorf("the terminal shows %q at the default verbosity", noise)
		}
	}

	// The bootstrap cluster is gone; the management cluster is the only local cluster added.
	var added []string
	for _, s := range addedClusters(t, store, before) {
		added = append(added, s.Name)
	}
	if len(added) != 1 || added[0] != "e2e-mgmt" {
		t.Fatalf("local clusters added: %v, want only e2e-mgmt (the bootstrap cluster deleted)", added)
	}
	spec, err := store.Get("e2e-mgmt")
	if err != nil {
		t.Fatal(err)
	}
	if !spec.Real() || spec.Owner == nil || spec.Owner.ManagementCluster != "e2e-mgmt" {
		t.Errorf("the management cluster's local cluster: runtime %q, owner %+v; want real nodes owned by itself", spec.Runtime, spec.Owner)
	}
	// The bootstrap cluster was of real nodes too, as its lines in the audit log say: every node
	// of the flow is real.
	realNodeImage := "Ensuring node image (slipway real node: containerd, kubelet, kubeadm, Kubernetes " + assets.DefaultKubernetesVersion() + ")"
	if audit, err := os.ReadFile(filepath.Join(home, "logs", "e2e-mgmt.log")); err != nil || !strings.Contains(string(audit), realNodeImage) {
		t.Errorf("the audit log does not say the bootstrap cluster's nodes were real (%v):\n%s", err, tail(audit, 3000))
	}

	// Its local cluster is deleted through it, not underneath it.
	if out, err := runSlipway(t, "local", "cluster", "delete", "e2e-mgmt"); err == nil || !strings.Contains(out, "`slipway management-cluster delete e2e-mgmt`") {
		t.Errorf("local cluster delete of the management cluster: want a refusal naming management-cluster delete, got %v:\n%s", err, out)
	}
	// A second create of the same name refuses before it starts anything.
	if out, err := runSlipway(t, "management-cluster", "create", "-f", file); err == nil ||
		!strings.Contains(out, "configuration validation failed") || !strings.Contains(out, "cluster name e2e-mgmt matches") {
		t.Errorf("a second create of e2e-mgmt: want a refusal naming the name, got %v:\n%s", err, out)
	}
	if again := addedClusters(t, store, before); len(again) != len(added) {
		t.Errorf("a second create of e2e-mgmt made a local cluster")
	}

	// The management cluster, through the context create merged into the kubeconfig.
	mgmt := managementClusterOf(t, "e2e-mgmt")
	mc, ctx := mgmt.client, t.Context()
	t.Cleanup(func() {
		if t.Failed() {
			for _, ns := range []string{"tkg-system", "capi-system", "capl-system", "capi-kubeadm-control-plane-system"} {
				dumpPods(t, mgmt, ns)
			}
		}
	})

	c := &clusterv1.Cluster{}
	if err := mc.Get(ctx, client.ObjectKey{Namespace: "tkg-system", Name: "e2e-mgmt"}, c); err != nil {
		t.Fatalf("the management Cluster is not on the management cluster: %v", err)
	}
	if _, ok := c.Labels[tkg.LabelManagementCluster]; !ok || c.Annotations[tkg.AnnotationTKGVersion] == "" || c.Annotations[tkg.AnnotationEdition] != "tkg" {
		t.Errorf("the management Cluster's labels %v and annotations %v", c.Labels, c.Annotations)
	}
	if !conditions.IsTrue(c, clusterv1.AvailableCondition) {
		t.Errorf("the management Cluster is not Available: %s", conditions.GetMessage(c, clusterv1.AvailableCondition))
	}
	if err := publishedMetadata(ctx, mc, "e2e-mgmt", "management", c.Annotations[tkg.AnnotationTKGVersion]); err != nil {
		t.Error(err)
	}

	dirs, err := store.Dirs("e2e-mgmt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpRealNodeLogs(t, dirs)
			data, _ := os.ReadFile(filepath.Join(store.NodeServiceDir(), "node-service.log"))
			t.Logf("node service log:\n%s", tail(data, 4000))
		}
	})
	var wc *clusterv1.Cluster
	var wcc client.Client

	phase(t, "providers, releases and components", func(t *testing.T) {
		// clusterctl's inventory on the management cluster lists every provider.
		providers := &unstructured.UnstructuredList{}
		providers.SetAPIVersion("clusterctl.cluster.x-k8s.io/v1alpha3")
		providers.SetKind("ProviderList")
		if err := mc.List(ctx, providers); err != nil {
			t.Fatal(err)
		}
		var inventory []string
		for _, p := range providers.Items {
			inventory = append(inventory, p.GetNamespace()+"/"+p.GetName())
		}
		if got := strings.Join(inventory, ","); got != "caip-in-cluster-system/ipam-in-cluster,capi-kubeadm-bootstrap-system/bootstrap-kubeadm,capi-kubeadm-control-plane-system/control-plane-kubeadm,capi-system/cluster-api,capl-system/infrastructure-local" {
			t.Errorf("provider inventory on the management cluster: %s", got)
		}

		// Its releases are Ready and its ClusterBootstrap resolved, with the core packages reconciled.
		for _, name := range []string{"v1.34.3---vmware.1-tkg.1", "v1.35.4---vmware.1-tkg.1"} {
			tkr := &runv1alpha3.TanzuKubernetesRelease{}
			if err := mc.Get(ctx, client.ObjectKey{Name: name}, tkr); err != nil || !tkr.Status.Conditions.IsTrue(runv1alpha3.ConditionReady) {
				t.Errorf("TKR %s on the management cluster: %v, conditions %+v", name, err, tkr.Status.Conditions)
			}
		}
		eventually(t, 3*time.Minute, "the management cluster's ClusterBootstrap resolved", func() error {
			cb := &runv1alpha3.ClusterBootstrap{}
			if err := mc.Get(ctx, client.ObjectKeyFromObject(c), cb); err != nil {
				return err
			}
			if cb.Status.ResolvedTKR != "v1.34.3---vmware.1-tkg.1" {
				return fmt.Errorf("resolvedTKR %q", cb.Status.ResolvedTKR)
			}
			// A local cluster's ClusterBootstrap names no CPI or CSI: the release's are vSphere's.
			if cb.Spec.CPI != nil || cb.Spec.CSI != nil {
				return fmt.Errorf("a local management cluster's ClusterBootstrap names CPI %+v and CSI %+v", cb.Spec.CPI, cb.Spec.CSI)
			}
			return nil
		})

		// seeds/003's management column runs; releases are served as v1alpha1 and v1alpha2 through
		// the conversion webhook; a Capability is answered.
		checkManagementPods(t, mc)
		checkReleaseConversion(t, mc)
		checkCapability(t, mc)
		checkFromTheCopy(t, mc, store, "e2e-mgmt", site)

	})

	phase(t, "its nodes, its provider in a container and its pinniped", func(t *testing.T) {
		// The identity provider of its file reaches its pinniped: the values Secret, adopted for
		// the Cluster, renders the (simulated) supervisor.
		eventually(t, 2*time.Minute, "the pinniped supervisor of the OIDC identity provider", func() error {
			d := &appsv1.Deployment{}
			if err := mc.Get(ctx, client.ObjectKey{Namespace: "pinniped-supervisor", Name: "pinniped-supervisor"}, d); err != nil {
				return err
			}
			if got := d.Annotations["tkg.tanzu.vmware.com/upstream-issuer"]; got != "https://login.example.com/oauth2" {
				return fmt.Errorf("upstream issuer %q", got)
			}
			return nil
		})
		values := &corev1.Secret{}
		if err := mc.Get(ctx, client.ObjectKey{Namespace: "tkg-system", Name: "e2e-mgmt-pinniped-package"}, values); err != nil ||
			!slices.ContainsFunc(values.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Kind == "Cluster" && r.Name == "e2e-mgmt" }) {
			t.Errorf("the pinniped values Secret is not the Cluster's: %v", err)
		}

		// Its nodes are the real kubelet's on containerd, and its own provider runs in a
		// container on one of them.
		checkContainerdNodes(t, mc, 2)
		pods := &corev1.PodList{}
		if err := mc.List(ctx, pods, client.InNamespace("capl-system")); err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0 && strings.HasPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://") {
				running++
			}
		}
		if running != 1 {
			t.Fatalf("%d pods of the local provider run in containerd, want 1", running)
		}

		// A killed node service is started again by the load balancer of a cluster of real
		// nodes; the phases after this one make nodes through the new one.
		if !store.NodeServiceRunning() {
			t.Fatal("the store's node service does not run")
		}
		serviceArgs := []string{slipway, "local", "node-service"}
		killed := proc.WithArgs(serviceArgs)
		if len(killed) != 1 {
			t.Fatalf("%d node service processes, want 1", len(killed))
		}
		if err := syscall.Kill(killed[0], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		killedAt := time.Now()
		eventually(t, 30*time.Second, "the node service started again", func() error {
			if pids := proc.WithArgs(serviceArgs); len(pids) != 1 || pids[0] == killed[0] || !store.NodeServiceRunning() {
				return fmt.Errorf("node service processes %v, the killed one %d", pids, killed[0])
			}
			return nil
		})
		t.Logf("the killed node service ran again after %s", time.Since(killedAt).Round(100*time.Millisecond))
	})

	phase(t, "a workload cluster from a flat file", func(t *testing.T) {
		// A workload cluster from a flat file, with TKG's waits, listed, scaled and deleted.
		wcFile := write("wc.yaml", "CLUSTER_NAME: e2e-wc\nCLUSTER_PLAN: dev\nCNI: calico\nWORKER_MACHINE_COUNT: 1\nKUBERNETES_VERSION: v1.34.3\n")
		wcStart := time.Now()
		out, err = runSlipwayTimeout(t, 10*time.Minute, "cluster", "create", "-f", wcFile, "-t", "5m")
		t.Logf("cluster create took %s:\n%s", time.Since(wcStart).Round(time.Second), out)
		if err != nil {
			t.Fatalf("cluster create: %v", err)
		}
		checkLinesInOrder(t, "cluster create", out, "Validating configuration...", "Legacy configuration file detected.", "Using this new Cluster configuration '",
			"creating workload cluster 'e2e-wc'...", "waiting for cluster to be initialized...", "waiting for cluster nodes to be available...",
			"waiting for addons core packages installation...", "successfully reconciled package: 'e2e-wc-calico' in namespace: 'tkg-system'",
			"Workload cluster 'e2e-wc' created")
		// TKG's audit log of the cluster, kept until it is deleted.
		audit := filepath.Join(home, "logs", "e2e-wc.log")
		if data, err := os.ReadFile(audit); err != nil || !strings.Contains(string(data), "] Workload cluster 'e2e-wc' created") {
			t.Errorf("the audit log %s: %v\n%s", audit, err, data)
		}
		out, err = slipwayOutput(t, "", "cluster", "list", "-o", "json")
		var listed []map[string]any
		if err != nil || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 1 {
			t.Fatalf("cluster list -o json: %v\n%s", err, out)
		}
		if l := listed[0]; l["name"] != "e2e-wc" || l["status"] != "running" || l["controlplane"] != "1/1" || l["workers"] != "1/1" ||
			l["plan"] != "dev" || l["tkr"] != "v1.34.3---vmware.1-tkg.1" || l["kubernetes"] != "v1.34.3+vmware.1" {
			t.Errorf("cluster list: %v", l)
		}
		// Converged, the management cluster's Cluster API objects and the workload cluster's, its
		// ClusterBootstrap, PackageInstalls and values, and every add-on object on the workload
		// cluster stay still.
		wc = &clusterv1.Cluster{}
		if err := mc.Get(ctx, client.ObjectKey{Namespace: "default", Name: "e2e-wc"}, wc); err != nil {
			t.Fatal(err)
		}
		wcc = workloadClient(t, mgmt, wc)
		if spec, err := store.Get("e2e-wc"); err != nil || !spec.Real() {
			t.Errorf("the workload cluster's local cluster: %+v, %v; want real nodes", spec, err)
		}
		checkContainerdNodes(t, wcc, 2)
		// The addons manager publishes the workload cluster's metadata in it, as TKG's does.
		eventually(t, time.Minute, "tkg-metadata on e2e-wc", func() error {
			return publishedMetadata(ctx, wcc, "e2e-wc", "workload", c.Annotations[tkg.AnnotationTKGVersion])
		})
		checkStill(t, time.Minute,
			clusterAPISample(t, mc, "tkg-system"),
			clusterAPISample(t, mc, "default"),
			kindsSample(t, "add-on objects of e2e-wc on the management cluster", mc, "default",
				runv1alpha3.GroupVersion.WithKind("ClusterBootstrapList"), pkgingv1alpha1.SchemeGroupVersion.WithKind("PackageInstallList"),
				cniv1alpha1.GroupVersion.WithKind("CalicoConfigList"), runv1alpha3.GroupVersion.WithKind("KappControllerConfigList"),
				corev1.SchemeGroupVersion.WithKind("SecretList")),
			deployedSample(t, "objects the packages deployed on e2e-wc", workloadConfig(t, mgmt, wc), wcc),
			kindsSample(t, "package objects on e2e-wc", wcc, "tkg-system", pkgingv1alpha1.SchemeGroupVersion.WithKind("PackageInstallList"),
				kappctrlv1alpha1.SchemeGroupVersion.WithKind("AppList"), corev1.SchemeGroupVersion.WithKind("SecretList")))

	})

	phase(t, "faults of real nodes", func(t *testing.T) {
		// Its processes killed, one at a time, come back; the provider's among them. After the
		// workload cluster's check of stillness, which the faults' conditions would stir.
		checkRealNodeFaults(t, mc, c.Name, store,
			slipwayComponent("capl-system", nil, "local-infrastructure-controller"), restartedByProvider(t, mc, mc, c))
	})

	phase(t, "the management cluster scales itself", func(t *testing.T) {
		// The management cluster's own controllers scale its workers 1→2→1.
		nodesBefore := &corev1.NodeList{}
		if err := mc.List(ctx, nodesBefore); err != nil {
			t.Fatal(err)
		}
		scaled := time.Now()
		patchTopology(t, mgmt, c, func(c *clusterv1.Cluster) { c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr.To[int32](2) })
		eventually(t, 4*time.Minute, "two workers", func() error { return clusterAvailable(ctx, mgmt, c, "v1.34.3+vmware.1", 3) })
		t.Logf("the management cluster scaled itself to two workers in %s", time.Since(scaled).Round(100*time.Millisecond))
		// The new worker is a real node of this host, which its provider made through the node
		// service after both were killed.
		if spec, err := store.Get("e2e-mgmt"); err != nil || len(spec.Nodes) != 3 {
			t.Fatalf("the store holds %v nodes of e2e-mgmt (%v), want 3", spec, err)
		}
		checkContainerdNodes(t, mc, 3)
		// It pulls from the copy, as the LocalCluster's hostRegistries tell the node service.
		checkPodsFromTheCopy(t, mc, nodesBefore, site)

		// And back to one: a worker it drains and deletes, whose node leaves this host. The
		// upgrade below then rolls two machines.
		scaled = time.Now()
		patchTopology(t, mgmt, c, func(c *clusterv1.Cluster) { c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr.To[int32](1) })
		eventually(t, 4*time.Minute, "one worker", func() error { return clusterAvailable(ctx, mgmt, c, "v1.34.3+vmware.1", 2) })
		eventually(t, time.Minute, "the removed worker's node gone from the store", func() error {
			if spec, err := store.Get("e2e-mgmt"); err != nil || len(spec.Nodes) != 2 {
				return fmt.Errorf("the store holds %v nodes of e2e-mgmt (%v), want 2", spec, err)
			}
			return nil
		})
		t.Logf("the management cluster scaled itself back to one worker in %s", time.Since(scaled).Round(100*time.Millisecond))
	})

	phase(t, "faults of the workload cluster's real nodes", func(t *testing.T) {
		needPhase(t, wc != nil, "a workload cluster from a flat file")
		// The same suite on the workload cluster: its load balancer is started again by the
		// management cluster's own provider, and its kapp-controller by the kubelet.
		checkRealNodeFaults(t, wcc, wc.Name, store,
			kappController, restartedByProvider(t, mc, wcc, wc))
	})

	phase(t, "the workload cluster scaled, pooled and upgraded", func(t *testing.T) {
		needPhase(t, wc != nil, "a workload cluster from a flat file")
		// CNI: calico means calico, not the release's default antrea, on the workload cluster.
		pis := &pkgingv1alpha1.PackageInstallList{}
		if err := wcc.List(ctx, pis, client.InNamespace("tkg-system")); err != nil {
			t.Fatal(err)
		}
		var installed []string
		for _, pi := range pis.Items {
			installed = append(installed, pi.Name)
		}
		if !slices.Contains(installed, "e2e-wc-calico") || slices.Contains(installed, "e2e-wc-antrea") {
			t.Errorf("the workload cluster's PackageInstalls %v: want e2e-wc-calico and no e2e-wc-antrea", installed)
		}
		if out, err := runSlipway(t, "cluster", "scale", "e2e-wc", "-w", "2"); err != nil || !strings.Contains(out, "Workload cluster 'e2e-wc' is being scaled") {
			t.Fatalf("cluster scale: %v\n%s", err, out)
		}
		eventually(t, 3*time.Minute, "the workload cluster's two workers", func() error { return clusterAvailable(ctx, mgmt, wc, "v1.34.3+vmware.1", 3) })

		// A node pool added from md-0, listed, then deleted.
		npFile := write("np.yaml", "name: np-1\nbaseMachineDeployment: md-0\nreplicas: 1\nlabels: {pool: np-1}\n")
		if out, err := runSlipway(t, "cluster", "node-pool", "set", "e2e-wc", "-f", npFile); err != nil || !strings.Contains(out, "Node pool 'np-1' of cluster 'e2e-wc' is being created") {
			t.Fatalf("node-pool set: %v\n%s", err, out)
		}
		pooled := time.Now()
		eventually(t, 3*time.Minute, "the node pool's machine", func() error { return clusterAvailable(ctx, mgmt, wc, "v1.34.3+vmware.1", 4) })
		t.Logf("node pool np-1 added in %s", time.Since(pooled).Round(100*time.Millisecond))
		eventually(t, time.Minute, "the node pool's node labelled", func() error {
			nodes := &corev1.NodeList{}
			if err := wcc.List(ctx, nodes, client.MatchingLabels{"pool": "np-1"}); err != nil {
				return err
			}
			if len(nodes.Items) != 1 {
				return fmt.Errorf("%d nodes labelled pool=np-1, want 1", len(nodes.Items))
			}
			return nil
		})
		eventually(t, 30*time.Second, "node-pool list with both pools", func() error {
			if out, err := runSlipway(t, "cluster", "node-pool", "list", "e2e-wc"); err != nil || !clitest.LineHas(out, "md-0", "default", "2", "2") || !clitest.LineHas(out, "np-1", "default", "1", "1") {
				return fmt.Errorf("node-pool list: %v\n%s", err, out)
			}
			return nil
		})
		if out, err := runSlipway(t, "cluster", "node-pool", "delete", "e2e-wc", "-n", "np-1"); err != nil || !strings.Contains(out, "Node pool 'np-1' is being deleted") {
			t.Fatalf("node-pool delete: %v\n%s", err, out)
		}
		eventually(t, 3*time.Minute, "the node pool gone", func() error { return clusterAvailable(ctx, mgmt, wc, "v1.34.3+vmware.1", 3) })
		checkMachineHealthCheckVerbs(t, mc)
		if out, err := runSlipway(t, "cluster", "available-upgrades", "get", "e2e-wc"); err != nil || !clitest.LineHas(out, "v1.35.4---vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1", "True") {
			t.Errorf("available-upgrades get: %v\n%s", err, out)
		}

		// Upgrade to the newer release: every machine and the add-ons move to it.
		upgraded := time.Now()
		out, err = runSlipwayTimeout(t, 12*time.Minute, "cluster", "upgrade", "e2e-wc", "--tkr", "v1.35", "-y", "-t", "8m")
		t.Logf("cluster upgrade took %s:\n%s", time.Since(upgraded).Round(time.Second), out)
		if err != nil {
			t.Fatalf("cluster upgrade: %v", err)
		}
		for _, line := range []string{"Upgrading kubernetes cluster to `v1.35.4+vmware.1` version, tkr version: `v1.35.4+vmware.1-tkg.1`",
			"Waiting for kubernetes version to be updated for control plane nodes...", "Waiting for kubernetes version to be updated for worker nodes...",
			"Cluster 'e2e-wc' successfully upgraded to kubernetes version 'v1.35.4+vmware.1'"} {
			if !strings.Contains(out, line) {
				t.Errorf("cluster upgrade's output lacks %q", line)
			}
		}
		eventuallyExplained(t, time.Minute, "the upgraded workload cluster", func() error { return clusterAvailable(ctx, mgmt, wc, "v1.35.4+vmware.1", 3) },
			func() { logNodeDeletion(t, mc, wcc, wc, "e2e-mgmt") })
		if out, err := runSlipway(t, "cluster", "upgrade", "e2e-wc", "-y"); err == nil || !strings.Contains(out, "no available upgrades for cluster 'e2e-wc', namespace 'default'") {
			t.Errorf("a second upgrade: want TKG's refusal, got %v:\n%s", err, out)
		}
		if out, err := runSlipway(t, "cluster", "available-upgrades", "get", "e2e-wc"); err != nil || !strings.Contains(out, "no available upgrades for cluster 'e2e-wc', namespace 'default'") {
			t.Errorf("available-upgrades get of the upgraded cluster: %v\n%s", err, out)
		}

		// The rollout's conditions settle shortly after the last machine is Ready.
		eventually(t, time.Minute, "cluster get showing the upgraded cluster running", func() error {
			out, err := runSlipway(t, "cluster", "get", "e2e-wc")
			for _, want := range []string{"e2e-wc default running 1/1 2/2 v1.35.4+vmware.1", "Details:", "/e2e-wc True", "├─ClusterInfrastructure - LocalCluster/",
				"├─ControlPlane - KubeadmControlPlane/", "└─Workers", "Add-ons:", "TKR: v1.35.4---vmware.1-tkg.1", "calico.tanzu.vmware.com.3.26.3",
				// calico's agents cannot run here: their stand-ins are said to be simulated.
				"Simulated on this host (stand-in images that do none of their work):", "kube-system/calico-node"} {
				if err != nil || !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
					return fmt.Errorf("cluster get lacks %q (%v):\n%s", want, err, out)
				}
			}
			return nil
		})
		wcKubeconfig := filepath.Join(dir, "wc.kubeconfig")
		if out, err := runSlipway(t, "cluster", "kubeconfig", "get", "e2e-wc", "--admin", "--export-file", wcKubeconfig); err != nil ||
			!strings.Contains(out, "You can now access the cluster by running 'kubectl config use-context e2e-wc-admin@e2e-wc' under path") {
			t.Errorf("cluster kubeconfig get: %v\n%s", err, out)
		} else if cfg, err := clientcmd.LoadFromFile(wcKubeconfig); err != nil || cfg.Contexts["e2e-wc-admin@e2e-wc"] == nil {
			t.Errorf("the exported kubeconfig lacks the workload cluster's context: %v", err)
		} else {
			// The release's metrics-server serves the Metrics API on the upgraded cluster.
			kubectl := kubectlOn(t, wcKubeconfig)
			checkMetricsAPI(t, wcc, func(args ...string) (string, error) {
				return kubectl(append([]string{"--context", "e2e-wc-admin@e2e-wc"}, args...)...)
			})
		}
	})

	phase(t, "the workload cluster's owner references come back", func(t *testing.T) {
		needPhase(t, wc != nil, "a workload cluster from a flat file")
		checkOwnersComeBack(t, mgmt, "default", "e2e-wc")
	})

	phase(t, "a workload cluster made in a browser", func(t *testing.T) {
		// A second workload cluster, made in a browser through `slipway ui`, which lists e2e-wc.
		checkUnmanagedCNI(t, mc, store)
	})

	phase(t, "the workload cluster deleted", func(t *testing.T) {
		deleteStart := time.Now()
		if out, err := runSlipwayTimeout(t, 5*time.Minute, "cluster", "delete", "e2e-wc", "-y", "-t", "3m"); err != nil || !strings.Contains(out, "Workload cluster 'e2e-wc' deleted") {
			t.Fatalf("cluster delete: %v\n%s", err, out)
		}
		// Its speed is hack/bench/cluster.sh's to judge (goal 30 s on an idle host), not a timed test's.
		t.Logf("cluster delete took %s", time.Since(deleteStart).Round(100*time.Millisecond))
		if _, err := os.Stat(filepath.Join(home, "logs", "e2e-wc.log")); !os.IsNotExist(err) {
			t.Errorf("the deleted cluster's audit log is still there: %v", err)
		}
		checkNothingLeft(t, mc, store, "e2e-mgmt", "default", "e2e-wc")

	})

	phase(t, "management-cluster get and kubeconfig", func(t *testing.T) {
		// get shows it running, with its objects and providers. Its status is read from the
		// Cluster's conditions, which a loaded host may hold back for a few probes after the
		// workload cluster's delete: it is waited for, and the wait logged.
		asked, tries := time.Now(), 0
		envtest.EventuallyEvery(t, 2*time.Minute, 3*time.Second, "management-cluster get showing e2e-mgmt running", func() error {
			tries++
			out, err = runSlipway(t, "management-cluster", "get")
			if err != nil {
				return fmt.Errorf("management-cluster get: %v\n%s", err, out)
			}
			for _, want := range []string{"e2e-mgmt tkg-system running 1/1 1/1 v1.34.3+vmware.1 management dev v1.34.3---vmware.1-tkg.1", "Details:", "/e2e-mgmt", "ControlPlane - KubeadmControlPlane/",
				"Providers:", "capl-system", "infrastructure-local"} {
				if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
					if tries == 1 {
						// What held it back is worth knowing even when a later read passes.
						t.Logf("management-cluster get, first read, lacks %q:\n%s", want, out)
					}
					return fmt.Errorf("management-cluster get lacks %q:\n%s", want, out)
				}
			}
			return nil
		})
		t.Logf("management-cluster get showed e2e-mgmt running after %s", time.Since(asked).Round(100*time.Millisecond))
		// Upstream clusterctl describes it as one of its own and would move it.
		checkClusterctl(t, "e2e-mgmt", "LocalCluster")
		exported := filepath.Join(dir, "exported.kubeconfig")
		if out, err := runSlipway(t, "management-cluster", "kubeconfig", "get", "--admin", "--export-file", exported); err != nil ||
			!strings.Contains(out, "Credentials of cluster 'e2e-mgmt' have been saved") {
			t.Errorf("kubeconfig get: %v\n%s", err, out)
		} else if cfg, err := clientcmd.LoadFromFile(exported); err != nil || cfg.Contexts["e2e-mgmt-admin@e2e-mgmt"] == nil {
			t.Errorf("the exported kubeconfig lacks the context: %v", err)
		}

	})

	phase(t, "management-cluster upgrade", func(t *testing.T) {
		// management-cluster upgrade moves the management cluster, which runs the controllers doing
		// it, to the newer release: its control plane swaps its only node, then its workers roll, and
		// its add-ons follow.
		upgradedMC := time.Now()
		out, err = runSlipwayTimeout(t, 15*time.Minute, "management-cluster", "upgrade", "--tkr", "v1.35", "-y", "-t", "10m")
		t.Logf("management-cluster upgrade took %s:\n%s", time.Since(upgradedMC).Round(time.Second), out)
		if err != nil {
			t.Fatalf("management-cluster upgrade: %v", err)
		}
		// Its providers, kapp-controller and management packages are those of the package repository
		// it was made from: each is checked and kept.
		checkLinesInOrder(t, "management-cluster upgrade", out, "Upgrading management cluster providers...", "All providers are up to date...",
			"Management cluster providers upgraded successfully...", "Upgrading kapp-controller...", "kapp-controller 0.50.0+vmware.1-tkg.1 is running after",
			"Upgrading management components...", "Updating package repository 'tanzu-management'", "successfully reconciled package: tkg-pkg",
			"Upgrading management cluster kubernetes version...",
			"Upgrading kubernetes cluster to `v1.35.4+vmware.1` version, tkr version: `v1.35.4+vmware.1-tkg.1`",
			"Waiting for kubernetes version to be updated for control plane nodes...", "Waiting for kubernetes version to be updated for worker nodes...",
			"waiting for addons core packages installation...", "successfully reconciled package: 'e2e-mgmt-antrea' in namespace: 'tkg-system'",
			"Creating tkg-bom versioned ConfigMaps...",
			"Management cluster 'e2e-mgmt' successfully upgraded to TKG version 'v2.5.2' with kubernetes version 'v1.35.4+vmware.1'")
		if strings.Contains(out, "ConfigMaps creation is failing") {
			t.Errorf("management-cluster upgrade could not publish its metadata:\n%s", out)
		}
		if err := publishedMetadata(ctx, mc, "e2e-mgmt", "management", "v2.5.2"); err != nil {
			t.Error(err)
		}
		eventuallyExplained(t, time.Minute, "the upgraded management cluster", func() error { return clusterAvailable(ctx, mgmt, c, "v1.35.4+vmware.1", 2) },
			func() { logTemplates(t, mc, c) })
		eventually(t, time.Minute, "the management cluster's add-ons on the new release", func() error {
			pi := &pkgingv1alpha1.PackageInstall{}
			if err := mc.Get(ctx, client.ObjectKey{Namespace: "tkg-system", Name: "e2e-mgmt-antrea"}, pi); err != nil {
				return err
			}
			if pi.Spec.PackageRef == nil || pi.Spec.PackageRef.VersionSelection == nil || pi.Spec.PackageRef.VersionSelection.Constraints != "1.13.1+vmware.1-tkg.1" {
				return fmt.Errorf("e2e-mgmt-antrea's package: %+v", pi.Spec.PackageRef)
			}
			return nil
		})
		// With no newer release, an upgrade checks its components and keeps its release.
		out, err = runSlipwayTimeout(t, 5*time.Minute, "management-cluster", "upgrade", "-y", "-t", "3m")
		if err != nil {
			t.Fatalf("management-cluster upgrade with no newer release: %v\n%s", err, out)
		}
		checkLinesInOrder(t, "management-cluster upgrade with no newer release", out, "All providers are up to date...", "Upgrading kapp-controller...",
			"Upgrading management components...", "successfully reconciled package: tkg-pkg",
			"Management cluster kubernetes version v1.35.4+vmware.1 (release v1.35.4---vmware.1-tkg.1) is the newest available: it stays",
			"Management cluster 'e2e-mgmt' successfully upgraded to TKG version 'v2.5.2' with kubernetes version 'v1.35.4+vmware.1'")

	})

	phase(t, "management-cluster delete", func(t *testing.T) {
		// delete moves the objects back to a cleanup cluster it makes, which deletes the machines:
		// no process, state or context is left. The cleanup cluster pulls from the copy too: its
		// nodes from the management cluster's LocalCluster's registries, its providers the images
		// the management cluster's package repository locks, so nothing warns that they do not.
		deleted := time.Now()
		out, err = runSlipwayTimeout(t, 15*time.Minute, "management-cluster", "delete", "-y", "-t", "10m")
		t.Logf("management-cluster delete took %s:\n%s", time.Since(deleted).Round(time.Second), out)
		if err != nil || !strings.Contains(out, "Management cluster deleted!") {
			t.Fatalf("management-cluster delete: %v", err)
		}
		checkLinesInOrder(t, "management-cluster delete", out, "Setting up cleanup cluster...", "Installing providers on cleanup cluster...",
			"Moving TKR and Cluster API objects from management cluster to cleanup cluster...", "Deleting management cluster...")
		if strings.Contains(out, "Warning") {
			t.Errorf("management-cluster delete warns: the cleanup cluster's providers do not run from the copy")
		}
		if after, _ := store.List(); len(after) != len(before) {
			t.Errorf("local clusters left after delete: %d, before create: %d", len(after), len(before))
		}
		if pids := proc.Using(dirs.Root); len(pids) > 0 {
			t.Errorf("processes of the deleted management cluster still run: %v", pids)
		}
		if _, err := os.Stat(dirs.Root); !os.IsNotExist(err) {
			t.Errorf("the management cluster's state %s is left: %v", dirs.Root, err)
		}
		if cfg, err := clientcmd.LoadFromFile(os.Getenv("KUBECONFIG")); err == nil && cfg.Contexts["e2e-mgmt-admin@e2e-mgmt"] != nil {
			t.Errorf("the management cluster's context is left in the kubeconfig")
		}
		// With no cluster of real nodes left, the node service is gone too.
		if store.NodeServiceRunning() || len(proc.WithArgs([]string{slipway, "local", "node-service"})) > 0 {
			t.Errorf("the node service still runs with no cluster of real nodes left")
		}
		if _, err := os.Stat(store.NodeServiceDir()); !os.IsNotExist(err) {
			t.Errorf("the node service's directory is left: %v", err)
		}
		checkNoRealNodeLeft(t, beforeNodes)
	})
}

// checkLinesInOrder checks that a command's output has each line, in this order.
func checkLinesInOrder(t *testing.T, command, out string, lines ...string) {
	t.Helper()
	last := -1
	for _, line := range lines {
		i := strings.Index(out, line)
		if i < last || i < 0 {
			t.Errorf("%s's output lacks %q, or has it out of order", command, line)
		}
		last = max(last, i)
	}
}

// logTemplates logs, for a failed check of a topology Cluster, the machine template its
// KubeadmControlPlane names, the LocalMachineTemplates there are, and what the
// capi-controller-manager logged about them.
func logTemplates(t *testing.T, c client.Client, cl *clusterv1.Cluster) {
	t.Helper()
	ctx := t.Context()
	kcps := &controlplanev1.KubeadmControlPlaneList{}
	if err := c.List(ctx, kcps, client.InNamespace(cl.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cl.Name}); err == nil {
		for _, k := range kcps.Items {
			t.Logf("KubeadmControlPlane %s: resourceVersion %s, infrastructureRef %s", k.Name, k.ResourceVersion, k.Spec.MachineTemplate.Spec.InfrastructureRef.Name)
		}
	}
	templates := &infrav1.LocalMachineTemplateList{}
	if err := c.List(ctx, templates, client.InNamespace(cl.Namespace)); err == nil {
		for _, lmt := range templates.Items {
			t.Logf("LocalMachineTemplate %s: created %s, deleting %v", lmt.Name, lmt.CreationTimestamp.UTC().Format(time.RFC3339), lmt.DeletionTimestamp != nil)
		}
	}
	logCAPIController(t, cl.Name, func(line string) bool {
		return strings.Contains(line, "LocalMachineTemplate") || (strings.Contains(line, "KubeadmControlPlane") && strings.Contains(line, "rror"))
	})
}

// logNodeDeletion logs, for a failed check of a workload cluster whose machines were replaced,
// its Nodes, the Nodes its Machines name, the Machines' FailedDeleteNode Events and what the
// capi-controller-manager of the management cluster mgmtName logged of deleting Nodes.
func logNodeDeletion(t *testing.T, c, wcc client.Client, cl *clusterv1.Cluster, mgmtName string) {
	t.Helper()
	ctx := t.Context()
	nodes := &corev1.NodeList{}
	if err := wcc.List(ctx, nodes); err == nil {
		for _, n := range nodes.Items {
			var ready corev1.ConditionStatus
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					ready = c.Status
				}
			}
			t.Logf("Node %s: created %s, Ready %s", n.Name, n.CreationTimestamp.UTC().Format(time.RFC3339), ready)
		}
	}
	machines := &clusterv1.MachineList{}
	if err := c.List(ctx, machines, client.InNamespace(cl.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cl.Name}); err == nil {
		for _, m := range machines.Items {
			t.Logf("Machine %s: node %q, phase %s", m.Name, m.Status.NodeRef.Name, m.Status.Phase)
		}
	}
	events := &corev1.EventList{}
	if err := c.List(ctx, events, client.InNamespace(cl.Namespace)); err == nil {
		for _, e := range events.Items {
			if e.Reason == "FailedDeleteNode" {
				t.Logf("Event %s of %s: %s", e.Reason, e.InvolvedObject.Name, e.Message)
			}
		}
	}
	logCAPIController(t, mgmtName, func(line string) bool {
		return strings.Contains(line, "Deleting Node") || strings.Contains(line, "deleting Node")
	})
}

// logCAPIController logs the lines that match of the capi-controller-manager's logs on the
// local cluster name.
func logCAPIController(t *testing.T, name string, match func(line string) bool) {
	t.Helper()
	nodes := filepath.Join(home, "local", name, "nodes", "*")
	logs, _ := filepath.Glob(filepath.Join(nodes, "root", "var", "log", "pods", "capi-system_capi-controller-manager-*", "*", "*.log"))
	for _, f := range logs {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(data)) {
			if match(line) {
				t.Logf("%s: %s", filepath.Base(filepath.Dir(filepath.Dir(f))), strings.TrimSpace(line))
			}
		}
	}
}

// deleteAddedClusters deletes the local clusters that are not in before: what a failed run
// leaves, the management cluster and any bootstrap or cleanup cluster.
func deleteAddedClusters(t *testing.T, store cluster.Store, before []*cluster.Spec) {
	for _, s := range addedClusters(t, store, before) {
		if o, err := runSlipwayContext(context.Background(), "local", "cluster", "delete", s.Name, "--force"); err != nil {
			t.Logf("delete %s: %v\n%s", s.Name, err, o)
		}
	}
}

// addedClusters are the local clusters of the store that are not among before.
func addedClusters(t *testing.T, store cluster.Store, before []*cluster.Spec) []*cluster.Spec {
	t.Helper()
	after, err := store.List()
	if err != nil {
		t.Errorf("local clusters: %v", err)
	}
	var added []*cluster.Spec
	for _, s := range after {
		if !slices.ContainsFunc(before, func(b *cluster.Spec) bool { return b.Name == s.Name }) {
			added = append(added, s)
		}
	}
	return added
}

// managementClusterOf reaches the management cluster name through the admin context its create
// merged into the kubeconfig.
func managementClusterOf(t *testing.T, name string) *localCluster {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(),
		&clientcmd.ConfigOverrides{CurrentContext: name + "-admin@" + name}).ClientConfig()
	if err != nil {
		t.Fatalf("the management cluster's context: %v", err)
	}
	mc, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &localCluster{name: name, config: cfg, client: mc, cs: cs}
}

// runSlipwayTimeout runs the binary with a longer bound than runSlipway's, for whole flows.
func runSlipwayTimeout(t *testing.T, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	return runSlipwayIn(t, "", timeout, args...)
}

// checkClusterctl checks that upstream clusterctl describes the management cluster name, through
// its admin context, as one of its own (its infrastructure of kind infraKind, its control plane
// and workers, the Cluster True Available), and finds its Cluster to move, as slipway's own move
// did.
func checkClusterctl(t *testing.T, name, infraKind string) {
	t.Helper()
	kubeContext := name + "-admin@" + name
	o, err := exec.Command(clusterctlBin, "describe", "cluster", name, "-n", "tkg-system", "--kubeconfig-context", kubeContext).CombinedOutput()
	if err != nil {
		t.Errorf("clusterctl describe: %v\n%s", err, o)
	} else {
		for _, want := range []string{"Cluster/" + name + " ", "ClusterInfrastructure - " + infraKind + "/" + name + "-", "ControlPlane - KubeadmControlPlane/" + name + "-",
			"Workers", "MachineDeployment/" + name + "-md-0-"} {
			if !strings.Contains(string(o), want) {
				t.Errorf("clusterctl describe lacks %q:\n%s", want, o)
			}
		}
		if !slices.ContainsFunc(strings.Split(string(o), "\n"), func(l string) bool {
			f := strings.Fields(l)
			return len(f) > 0 && f[0] == "Cluster/"+name && slices.Contains(f, "True") && slices.Contains(f, "Available")
		}) {
			t.Errorf("clusterctl describe: the Cluster is not True Available:\n%s", o)
		}
	}
	o, err = exec.Command(clusterctlBin, "move", "-n", "tkg-system", "--dry-run", "--kubeconfig-context", kubeContext).CombinedOutput()
	if err != nil || !strings.Contains(string(o), "Moving Cluster API objects Clusters=1") {
		t.Errorf("clusterctl move --dry-run: %v\n%s", err, o)
	}
}

// checkMachineHealthCheckVerbs runs `cluster machinehealthcheck node get|set|delete` on e2e-wc,
// whose node pool md-0 has TKG's default check, and follows Cluster API's MachineHealthCheck.
func checkMachineHealthCheckVerbs(t *testing.T, mc client.Client) {
	t.Helper()
	out, err := slipwayOutput(t, "", "cluster", "machinehealthcheck", "node", "get", "e2e-wc")
	var checks []clusterclient.MachineHealthCheck
	if err != nil || json.Unmarshal([]byte(out), &checks) != nil || len(checks) != 1 || checks[0].Spec.Selector.MatchLabels[clusterv1.ClusterTopologyMachineDeploymentNameLabel] != "md-0" {
		t.Fatalf("machinehealthcheck node get: %v\n%s", err, out)
	}
	name := checks[0].Name
	out, err = runSlipway(t, "cluster", "mhc", "node", "set", "e2e-wc", "-m", name, "--unhealthy-conditions", "Ready:False:7m,MemoryPressure:True:3m", "--node-startup-timeout", "25m")
	if err != nil || !strings.Contains(out, "The MachineHealthChecks of node pools md-0 of cluster 'e2e-wc' are being set") {
		t.Fatalf("machinehealthcheck node set: %v\n%s", err, out)
	}
	eventually(t, time.Minute, "Cluster API's MachineHealthCheck changed", func() error {
		m := &clusterv1.MachineHealthCheck{}
		if err := mc.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: name}, m); err != nil {
			return err
		}
		got := map[string]int32{}
		for _, c := range m.Spec.Checks.UnhealthyNodeConditions {
			got[string(c.Type)+":"+string(c.Status)] = *c.TimeoutSeconds
		}
		if got["Ready:False"] != 420 || got["MemoryPressure:True"] != 180 || m.Spec.Checks.NodeStartupTimeoutSeconds == nil || *m.Spec.Checks.NodeStartupTimeoutSeconds != 1500 {
			return fmt.Errorf("conditions %v, node startup %v", got, m.Spec.Checks.NodeStartupTimeoutSeconds)
		}
		return nil
	})
	if out, err := runSlipway(t, "cluster", "mhc", "node", "set", "e2e-wc", "--match-labels", "a:b"); err == nil || !strings.Contains(out, "--match-labels") {
		t.Errorf("set --match-labels: want a refusal naming the flag, got %v\n%s", err, out)
	}
	if out, err := runSlipway(t, "cluster", "mhc", "node", "delete", "e2e-wc", "-y"); err != nil || !strings.Contains(out, "are being deleted") {
		t.Fatalf("machinehealthcheck node delete: %v\n%s", err, out)
	}
	eventually(t, time.Minute, "the node pool's MachineHealthCheck gone", func() error {
		out, err := runSlipway(t, "cluster", "machinehealthcheck", "node", "get", "e2e-wc")
		if err != nil || strings.TrimSpace(out) != "[]" {
			return fmt.Errorf("machinehealthcheck node get: %v\n%s", err, out)
		}
		return nil
	})
}

// checkUnmanagedCNI creates a workload cluster with CNI none as a user of `slipway ui` does, in
// Debian's Chromium (test/ui/workload.mjs): e2e-wc listed with its packages, the wizard filled,
// the review, the deploy run to its end, the new cluster listed. TKG's waits end, its
// ClusterBootstrap says the CNI is the user's and names none, and no CNI package is installed
// for it; then it is deleted.
func checkUnmanagedCNI(t *testing.T, mc client.Client, store cluster.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Minute)
	defer cancel()
	url := serveUI(t, ctx, "ui", "--browser", "none", "--bind", "127.0.0.1:0", "-t", "5m")
	runBrowser(t, ctx, "workload.mjs", url, "e2e-byo", "v1.34.3", "none", "1", "e2e-wc")
	cancel()
	cb := &runv1alpha3.ClusterBootstrap{}
	if err := mc.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "e2e-byo"}, cb); err != nil {
		t.Fatal(err)
	}
	if _, ok := cb.Annotations[runv1alpha3.AnnotationUnmanagedCNI]; !ok || cb.Spec.CNI != nil || cb.Spec.Kapp == nil {
		t.Errorf("the ClusterBootstrap of a cluster with CNI none: annotations %v, spec %+v", cb.Annotations, cb.Spec)
	}
	installs := &pkgingv1alpha1.PackageInstallList{}
	if err := mc.List(t.Context(), installs, client.InNamespace("tkg-system")); err != nil {
		t.Fatal(err)
	}
	for _, pi := range installs.Items {
		if pi.Name == "e2e-byo-antrea" || pi.Name == "e2e-byo-calico" {
			t.Errorf("a cluster with CNI none got the CNI package %s", pi.Name)
		}
	}
	if out, err := runSlipwayTimeout(t, 5*time.Minute, "cluster", "delete", "e2e-byo", "-y", "-t", "3m"); err != nil {
		t.Fatalf("cluster delete: %v\n%s", err, out)
	}
	checkNothingLeft(t, mc, store, "e2e-mgmt", "default", "e2e-byo")
}
