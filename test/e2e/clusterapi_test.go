package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1alpha2 "github.com/slipway-dev/slipway/api/core/v1alpha2"
	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/client/clusterctl"
	"github.com/slipway-dev/slipway/internal/images"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/vm"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// TestClusterAPIOnLocalRuntime makes a bootstrap cluster of real nodes with `--bootstrap` from the
// package sources pushed to a local registry: kapp-controller, clusterctl init from the local
// repository (cert-manager, Cluster API core, kubeadm bootstrap and control plane, the local
// infrastructure provider, each running in a container), the management repository and tkg-pkg
// with every child reconciled. Then a topology Cluster of the local ClusterClass that tkg-pkg
// installed, applied without saying which kind of node it wants, gets the bootstrap cluster's:
// real nodes that execute Cluster API's bootstrap data. It becomes Available, its add-ons
// reconcile, its workers scale 1→2 (upgrades are TestManagementClusterCreate's), and its deletion
// leaves no node behind. On the way, Carvel's kapp reads and takes part in what the package
// controller records, and the provider refuses a Cluster of real nodes without pod CIDRs.
func TestClusterAPIOnLocalRuntime(t *testing.T) {
	registryAddr, repo := pushPackages(t)
	pushNodeImages(t, registryAddr, "v1.34.3", "v1.35.4")
	start := time.Now()
	lc := createCluster(t, "e2e-capi", "--bootstrap", "--package-repository", repo)
	t.Logf("bootstrap-ready (cluster, kapp-controller, providers, tkg-pkg) after %s", time.Since(start).Round(100*time.Millisecond))
	ctx := t.Context()
	t.Cleanup(func() {
		if t.Failed() {
			for _, ns := range []string{"tkg-system", "capi-system", "capi-kubeadm-control-plane-system", "capl-system", "default"} {
				dumpPods(t, lc, ns)
			}
		}
	})

	// TKG's progress lines (seeds/000), in TKG's order within each of the two installs that go
	// at once: kapp-controller with the package repository, and clusterctl's providers. tkg-pkg
	// follows both, once every provider but the IPAM one is available.
	checkLinesInOrder(t, "local cluster create --bootstrap", lc.created,
		"Installing kapp-controller on bootstrap cluster...",
		"waiting for resource kapp-controller of type *v1.Deployment to be up and running",
		"Added package repository 'tanzu-management' in namespace 'tkg-system'",
		"Added installed package 'tkg-pkg'",
		"waiting for package: tkg-pkg",
		"waiting for package: tkg-clusterclass",
		"successfully reconciled package: tkg-clusterclass",
		"Waiting for Kubernetes releases v1.34.3+vmware.1-tkg.1, v1.35.4+vmware.1-tkg.1")
	checkLinesInOrder(t, "local cluster create --bootstrap", lc.created,
		"Installing kapp-controller on bootstrap cluster...",
		"Installing providers on bootstrapper...",
		"Waiting for provider cluster-api")
	// The providers are waited for at once, as TKG waits: each passes between the first wait and
	// the end of them all, in whichever order they become ready, and all but the IPAM provider
	// before tkg-pkg is installed.
	waiting, success := strings.Index(lc.created, "Waiting for provider cluster-api"), strings.Index(lc.created, "Success waiting on all providers.")
	metaPackage := strings.Index(lc.created, "Added installed package 'tkg-pkg'")
	for _, provider := range []string{"cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm", "infrastructure-local", "ipam-in-cluster"} {
		i := strings.Index(lc.created, "Passed waiting on provider "+provider+" after ")
		if i < waiting || i > success {
			t.Errorf("the bootstrap output does not say provider %s passed its wait between the first wait and the last", provider)
		}
		if provider != "ipam-in-cluster" && i > metaPackage {
			t.Errorf("tkg-pkg was installed before provider %s was available", provider)
		}
	}
	for _, child := range []string{"tanzu-framework", "tkr-service", "tkr-source-controller", "tanzu-addons-manager", "tkg-clusterclass",
		"tanzu-cliplugins", "tanzu-core-management-plugins", "tanzu-featuregates", "tanzu-auth"} {
		if !strings.Contains(lc.created, "successfully reconciled package: "+child+"\n") {
			t.Errorf("the bootstrap output does not say %s reconciled", child)
		}
	}
	for _, tkr := range []string{"v1.34.3---vmware.1-tkg.1", "v1.35.4---vmware.1-tkg.1"} {
		if !strings.Contains(lc.created, "Kubernetes release "+tkr+" is ready\n") {
			t.Errorf("the bootstrap output does not say %s is ready", tkr)
		}
	}
	if !strings.Contains(lc.created, `Installing provider="cluster-api" version="`+clusterctl.Version+`" targetNamespace="capi-system"`) {
		t.Errorf("clusterctl's log is not printed as Key=\"value\" pairs")
	}

	// The bootstrap payload of seeds/000, every pod running in a container, none simulated.
	want := map[string][]string{
		"tkg-system": {"kapp-controller-", "tanzu-addons-controller-manager-", "tkr-source-controller-manager-",
			"tkr-status-controller-manager-", "tkr-resolver-cluster-webhook-manager-", "tanzu-featuregates-controller-manager-",
			"object-propagation-controller-manager-"},
		"cert-manager":                      {"cert-manager-", "cert-manager-cainjector-", "cert-manager-webhook-"},
		"capi-system":                       {"capi-controller-manager-"},
		"capi-kubeadm-bootstrap-system":     {"capi-kubeadm-bootstrap-controller-manager-"},
		"capi-kubeadm-control-plane-system": {"capi-kubeadm-control-plane-controller-manager-"},
		"capl-system":                       {"capl-controller-manager-"},
		"caip-in-cluster-system":            {"caip-in-cluster-controller-manager-"},
		"tanzu-auth":                        {"tanzu-auth-controller-manager-"},
	}
	for ns, prefixes := range want {
		pods := &corev1.PodList{}
		if err := lc.client.List(ctx, pods, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, prefix := range prefixes {
			found := false
			for _, p := range pods.Items {
				// A Deployment's pod is <deployment>-<replica set hash>-<pod hash>.
				ofDeployment := strings.HasPrefix(p.Name, prefix) && strings.Count(strings.TrimPrefix(p.Name, prefix), "-") == 1
				found = found || ofDeployment && p.Status.Phase == corev1.PodRunning
			}
			if !found {
				t.Errorf("no running pod %s* in %s", prefix, ns)
			}
		}
	}
	// cert-manager is upstream's release, which clusterctl init installs from the provider
	// repository: its three images, built here from cert-manager's module, locked by digest
	// wherever the package repository located them.
	certManager := &corev1.PodList{}
	if err := lc.client.List(ctx, certManager, client.InNamespace("cert-manager")); err != nil {
		t.Fatal(err)
	}
	var certManagerImages []string
	for _, p := range certManager.Items {
		certManagerImages = append(certManagerImages, p.Spec.Containers[0].Image)
	}
	for _, image := range clusterctl.CertManagerImages {
		name := image[strings.LastIndex(image, "/"):]
		if !slices.ContainsFunc(certManagerImages, func(i string) bool { return strings.Contains(i, name+"@sha256:") }) {
			t.Errorf("no cert-manager pod runs upstream's %s locked by digest: %q", image, certManagerImages)
		}
	}
	checkUpstreamKappController(t, lc)
	// tanzu-core-management-plugins' CLIPlugins, for a tanzu CLI's plugin discovery.
	plugins := &unstructured.UnstructuredList{}
	plugins.SetAPIVersion("cli.tanzu.vmware.com/v1alpha1")
	plugins.SetKind("CLIPluginList")
	if err := lc.client.List(ctx, plugins, client.InNamespace("tkg-system")); err != nil {
		t.Errorf("CLIPlugins: %v", err)
	} else if len(plugins.Items) != 6 {
		t.Errorf("%d CLIPlugins in tkg-system, want the 6 management plugins", len(plugins.Items))
	}

	// tanzu-featuregates' default FeatureGate, admitted by its webhook.
	gate := &corev1alpha2.FeatureGate{}
	if err := lc.client.Get(ctx, client.ObjectKey{Name: "tkg-system"}, gate); err != nil {
		t.Errorf("FeatureGate tkg-system: %v", err)
	}

	// clusterctl's inventory lists every provider.
	providers := &unstructured.UnstructuredList{}
	providers.SetAPIVersion("clusterctl.cluster.x-k8s.io/v1alpha3")
	providers.SetKind("ProviderList")
	if err := lc.client.List(ctx, providers); err != nil {
		t.Fatal(err)
	}
	var inventory []string
	for _, p := range providers.Items {
		inventory = append(inventory, p.GetNamespace()+"/"+p.GetName())
	}
	if got := strings.Join(inventory, ","); got != "caip-in-cluster-system/ipam-in-cluster,capi-kubeadm-bootstrap-system/bootstrap-kubeadm,capi-kubeadm-control-plane-system/control-plane-kubeadm,capi-system/cluster-api,capl-system/infrastructure-local" {
		t.Errorf("provider inventory: %s", got)
	}

	// Carvel's kapp reads every record kapp-controller wrote, and kapp-controller
	// takes over what kapp deployed.
	t.Run("kapp reads and adopts kapp-controller's records", func(t *testing.T) { checkKapp(t, lc) })

	// caip-in-cluster is upstream's in-cluster IPAM provider in TKG's namespace: its image built
	// here, locked by digest; its webhook refuses a pool whose gateway and addresses are of two IP
	// families; it assigns an address from a pool to a claim.
	t.Run("upstream caip-in-cluster assigns an address", func(t *testing.T) { checkInClusterIPAM(t, lc) })

	// The ClusterClass came with tkg-pkg's tkg-clusterclass child into tkg-system, and
	// object-propagation copied it and its templates into default.
	cc := &clusterv1.ClusterClass{}
	if err := lc.client.Get(ctx, client.ObjectKey{Namespace: "tkg-system", Name: "tkg-local-default-v1.0.0"}, cc); err != nil {
		t.Fatalf("the ClusterClass tkg-clusterclass installs: %v", err)
	}
	eventually(t, 30*time.Second, "the ClusterClass copied into default", func() error {
		copies := map[string]client.Object{
			"tkg-local-default-v1.0.0":        &clusterv1.ClusterClass{},
			"tkg-local-default-v1.0.0-worker": &infrav1.LocalMachineTemplate{},
		}
		for name, o := range copies {
			if err := lc.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, o); err != nil {
				return err
			}
			if o.GetAnnotations()["propagation.slipway.dev/source"] != "tkg-system/"+name {
				return fmt.Errorf("%s in default is not a copy: %v", name, o.GetAnnotations())
			}
		}
		return nil
	})
	checkRefusesRealNodesWithoutPodCIDRs(t, lc)

	before := vm.OnHost()
	store := cluster.Store{Root: filepath.Dir(lc.dirs.Root)}
	wc := localTopologyCluster("wc", "v1.34.3")
	t.Cleanup(func() {
		if t.Failed() {
			if dirs, err := store.Dirs(wc.Name); err == nil {
				dumpRealNodeLogs(t, dirs)
			}
		}
	})
	created := time.Now()
	if err := lc.client.Create(ctx, wc); err != nil {
		t.Fatal(err)
	}
	// The TKR resolver resolved the version to the release's.
	if wc.Labels["run.tanzu.vmware.com/tkr"] != "v1.34.3---vmware.1-tkg.1" || wc.Spec.Topology.Version != "v1.34.3+vmware.1" {
		t.Errorf("the resolver gave TKR %q and version %q", wc.Labels["run.tanzu.vmware.com/tkr"], wc.Spec.Topology.Version)
	}
	eventually(t, 3*time.Minute, "the workload cluster Available", func() error {
		return clusterAvailable(ctx, lc, wc, "v1.34.3+vmware.1", 2)
	})
	t.Logf("workload cluster Available after %s", time.Since(created).Round(100*time.Millisecond))

	// Its kubeconfig Secret reaches it, and every node is Ready at the version.
	checkNodes(t, lc, wc, "v1.34.3+vmware.1", 2)

	// The release's add-ons, through the ClusterBootstrap.
	checkAddons(t, lc, wc, "v1.34.3---vmware.1-tkg.1")

	// The CLI on a cluster the provider owns: start returns once its endpoint answers; kubeconfig
	// says where the kubeconfig is.
	if out, err := runSlipway(t, "local", "cluster", "start", wc.Name); err != nil || !strings.Contains(out, `Cluster "wc" is Ready`) {
		t.Errorf("local cluster start of a provider-owned cluster: %v\n%s", err, out)
	}
	if out, err := runSlipway(t, "local", "cluster", "kubeconfig", wc.Name); err == nil ||
		!strings.Contains(out, `local cluster "wc" belongs to Cluster default/wc: its kubeconfig is on management cluster e2e-capi`) {
		t.Errorf("local cluster kubeconfig of a provider-owned cluster: want where its kubeconfig is, got %v\n%s", err, out)
	}

	// Scale the workers 1→2.
	scaled := time.Now()
	patchTopology(t, lc, wc, func(c *clusterv1.Cluster) { c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr.To[int32](2) })
	eventually(t, 3*time.Minute, "two workers", func() error { return clusterAvailable(ctx, lc, wc, "v1.34.3+vmware.1", 3) })
	t.Logf("scaled to two workers in %s", time.Since(scaled).Round(100*time.Millisecond))

	checkNodes(t, lc, wc, "v1.34.3+vmware.1", 3)
	// No annotation asked for them: the provider gave the Cluster its management cluster's kind
	// of node, real ones.
	checkRealNodesOf(t, lc, wc, "v1.34.3")

	// Deletion stops every node and the load balancer and removes the cluster's state.
	deleteWorkloadCluster(t, lc, wc)
	checkNoRealNodeLeft(t, before)
}

// localTopologyCluster is a Cluster of the local ClusterClass in namespace default at version:
// one control plane and one worker in machine deployment md-0, with TKG's default CLUSTER_CIDR
// and SERVICE_CIDR (the controller manager gives each node its pod CIDR from the first).
func localTopologyCluster(name, version string) *clusterv1.Cluster {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	c.Spec.ClusterNetwork = clusterv1.ClusterNetwork{
		Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"100.96.0.0/11"}},
		Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"100.64.0.0/13"}},
	}
	c.Spec.Topology = clusterv1.Topology{
		ClassRef:     clusterv1.ClusterClassRef{Name: "tkg-local-default-v1.0.0"},
		Version:      version,
		ControlPlane: clusterv1.ControlPlaneTopology{Replicas: ptr.To[int32](1)},
		Workers: clusterv1.WorkersTopology{MachineDeployments: []clusterv1.MachineDeploymentTopology{
			{Class: "tkg-worker", Name: "md-0", Replicas: ptr.To[int32](1)},
		}},
	}
	return c
}

// deleteWorkloadCluster deletes a Cluster of the local provider, waits until it is gone and
// checks that nothing of it is left: its objects, processes and state.
func deleteWorkloadCluster(t *testing.T, lc *localCluster, wc *clusterv1.Cluster) {
	t.Helper()
	ctx := t.Context()
	store := cluster.Store{Root: filepath.Dir(lc.dirs.Root)}
	deleted := time.Now()
	if err := lc.client.Delete(ctx, wc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "workload cluster "+wc.Name+" deleted", func() error {
		if err := lc.client.Get(ctx, client.ObjectKeyFromObject(wc), &clusterv1.Cluster{}); err == nil {
			return fmt.Errorf("cluster %s still exists", wc.Name)
		}
		return nil
	})
	t.Logf("%s deleted in %s", wc.Name, time.Since(deleted).Round(100*time.Millisecond))
	checkNothingLeft(t, lc.client, store, lc.name, wc.Namespace, wc.Name)
}

// clusterAvailable checks the Cluster is Available with every machine at the version, Ready,
// with a NodeRef, and the control plane's etcd and components healthy.
func clusterAvailable(ctx context.Context, lc *localCluster, wc *clusterv1.Cluster, version string, machines int) error {
	c := &clusterv1.Cluster{}
	if err := lc.client.Get(ctx, client.ObjectKeyFromObject(wc), c); err != nil {
		return err
	}
	if !conditions.IsTrue(c, clusterv1.AvailableCondition) {
		return fmt.Errorf("cluster not Available: %s", conditions.GetMessage(c, clusterv1.AvailableCondition))
	}
	list := &clusterv1.MachineList{}
	if err := lc.client.List(ctx, list, client.InNamespace(wc.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: wc.Name}); err != nil {
		return err
	}
	if len(list.Items) != machines {
		return fmt.Errorf("%d machines, want %d", len(list.Items), machines)
	}
	for _, m := range list.Items {
		if m.Spec.Version != version || !m.Status.NodeRef.IsDefined() || !conditions.IsTrue(&m, clusterv1.MachineReadyCondition) {
			return fmt.Errorf("machine %s: version %s, node %q, ready %v", m.Name, m.Spec.Version, m.Status.NodeRef.Name, conditions.IsTrue(&m, clusterv1.MachineReadyCondition))
		}
	}
	kcps := &controlplanev1.KubeadmControlPlaneList{}
	if err := lc.client.List(ctx, kcps, client.InNamespace(wc.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: wc.Name}); err != nil {
		return err
	}
	if len(kcps.Items) != 1 {
		return fmt.Errorf("%d KubeadmControlPlanes", len(kcps.Items))
	}
	for _, cond := range []string{controlplanev1.KubeadmControlPlaneEtcdClusterHealthyCondition, controlplanev1.KubeadmControlPlaneControlPlaneComponentsHealthyCondition} {
		if !conditions.IsTrue(&kcps.Items[0], cond) {
			return fmt.Errorf("KubeadmControlPlane %s is not true: %s", cond, conditions.GetMessage(&kcps.Items[0], cond))
		}
	}
	return nil
}

// checkNodes reads the workload cluster through the kubeconfig Secret Cluster API wrote.
func checkNodes(t *testing.T, lc *localCluster, wc *clusterv1.Cluster, version string, count int) {
	t.Helper()
	wcc := workloadClient(t, lc, wc)
	eventually(t, time.Minute, "the workload cluster's nodes", func() error {
		nodes := &corev1.NodeList{}
		if err := wcc.List(t.Context(), nodes); err != nil {
			return err
		}
		if len(nodes.Items) != count {
			return fmt.Errorf("%d nodes, want %d", len(nodes.Items), count)
		}
		for _, n := range nodes.Items {
			ready := false
			for _, c := range n.Status.Conditions {
				ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
			}
			if !ready || n.Status.NodeInfo.KubeletVersion != version || !strings.HasPrefix(n.Spec.ProviderID, "local://default/") {
				return fmt.Errorf("node %s: ready %v, version %s, providerID %s", n.Name, ready, n.Status.NodeInfo.KubeletVersion, n.Spec.ProviderID)
			}
		}
		return nil
	})
}

// workloadClient reaches a workload cluster through the kubeconfig Secret Cluster API wrote.
func workloadClient(t *testing.T, lc *localCluster, wc *clusterv1.Cluster) client.Client {
	t.Helper()
	wcc, err := client.New(workloadConfig(t, lc, wc), client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return wcc
}

// workloadConfig reaches a workload cluster through its kubeconfig Secret.
func workloadConfig(t *testing.T, lc *localCluster, wc *clusterv1.Cluster) *rest.Config {
	t.Helper()
	secret := &corev1.Secret{}
	if err := lc.client.Get(t.Context(), client.ObjectKey{Namespace: wc.Namespace, Name: wc.Name + "-kubeconfig"}, secret); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["value"])
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// checkAddons waits for the release's packages, which the addons manager on the bootstrap
// cluster installs through the ClusterBootstrap, to reconcile on the workload cluster.
func checkAddons(t *testing.T, lc *localCluster, wc *clusterv1.Cluster, tkr string) {
	t.Helper()
	cb := &runv1alpha3.ClusterBootstrap{}
	if err := lc.client.Get(t.Context(), client.ObjectKeyFromObject(wc), cb); err != nil {
		t.Fatalf("the ClusterBootstrap of %s: %v", wc.Name, err)
	}
	if cb.Status.ResolvedTKR != tkr {
		t.Errorf("ClusterBootstrap resolvedTKR %q, want %s", cb.Status.ResolvedTKR, tkr)
	}
	if cb.Spec.CPI != nil || cb.Spec.CSI != nil {
		t.Errorf("the ClusterBootstrap of local cluster %s names the CPI %v and CSI %v of another infrastructure", wc.Name, cb.Spec.CPI, cb.Spec.CSI)
	}
	wcc := workloadClient(t, lc, wc)
	// Four minutes: on a loaded 2-core host (CI, 2026-12-02) a real-node cluster's antrea had not
	// reconciled within two.
	eventuallyExplained(t, 4*time.Minute, "the add-on packages on the workload cluster", func() error {
		list := &pkgingv1alpha1.PackageInstallList{}
		if err := wcc.List(t.Context(), list, client.InNamespace("tkg-system")); err != nil {
			return err
		}
		var pending []string
		for _, name := range []string{"antrea", "metrics-server", "secretgen-controller", "pinniped", "tkg-storageclass"} {
			status := "missing"
			for _, pi := range list.Items {
				if pi.Name == wc.Name+"-"+name {
					status = fmt.Sprintf("%q %q", pi.Status.FriendlyDescription, pi.Status.UsefulErrorMessage)
				}
			}
			if status != `"Reconcile succeeded" ""` {
				pending = append(pending, fmt.Sprintf("%s-%s (%s)", wc.Name, name, status))
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("PackageInstalls of tkg-system not reconciled: %s", strings.Join(pending, ", "))
		}
		// The release's template also names vSphere's CPI and CSI: a local cluster gets neither.
		for _, pi := range list.Items {
			if strings.HasPrefix(pi.Name, wc.Name+"-vsphere-") {
				return fmt.Errorf("PackageInstall tkg-system/%s is of another infrastructure than the cluster's", pi.Name)
			}
		}
		return nil
	}, func() {
		// What the management cluster says of the cluster's packages: the ClusterBootstrap's
		// conditions and the PackageInstalls on it (kapp-controller's, installed remotely).
		if err := lc.client.Get(t.Context(), client.ObjectKeyFromObject(wc), cb); err == nil {
			for _, c := range cb.Status.Conditions {
				t.Logf("ClusterBootstrap %s: %s=%s %s %s", wc.Name, c.Type, c.Status, c.Reason, c.Message)
			}
		}
		pis := &pkgingv1alpha1.PackageInstallList{}
		if err := lc.client.List(t.Context(), pis, client.InNamespace(wc.Namespace)); err == nil {
			for _, pi := range pis.Items {
				t.Logf("PackageInstall %s/%s on the management cluster: %q %q", pi.Namespace, pi.Name, pi.Status.FriendlyDescription, pi.Status.UsefulErrorMessage)
			}
		}
		dumpWorkloadPods(t, lc, wc)
	})
	// tanzu-auth on the bootstrap cluster wrote the workload cluster's pinniped values: no
	// pinniped-info there, so no identity management, on the local infrastructure.
	eventually(t, time.Minute, "pinniped configured by tanzu-auth", func() error {
		d := &appsv1.Deployment{}
		if err := wcc.Get(t.Context(), client.ObjectKey{Namespace: "pinniped-concierge", Name: "pinniped-concierge"}, d); err != nil {
			return err
		}
		if d.Annotations["tkg.tanzu.vmware.com/identity-management-type"] != "none" || d.Annotations["tkg.tanzu.vmware.com/infrastructure-provider"] != "local" {
			return fmt.Errorf("pinniped-concierge annotations %v", d.Annotations)
		}
		return nil
	})
}

func patchTopology(t *testing.T, lc *localCluster, wc *clusterv1.Cluster, change func(*clusterv1.Cluster)) {
	t.Helper()
	c := &clusterv1.Cluster{}
	if err := lc.client.Get(t.Context(), client.ObjectKeyFromObject(wc), c); err != nil {
		t.Fatal(err)
	}
	before := c.DeepCopy()
	change(c)
	if err := lc.client.Patch(t.Context(), c, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// dumpWorkloadPods logs every pod of a workload cluster that is not ready (see dumpPodsOf).
func dumpWorkloadPods(t *testing.T, lc *localCluster, wc *clusterv1.Cluster) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(workloadConfig(t, lc, wc))
	if err != nil {
		t.Logf("a client of %s: %v", wc.Name, err)
		return
	}
	dumpPodsOf(t, cs, "")
}

// checkInClusterIPAM checks caip-in-cluster on a bootstrap cluster: upstream's image, its
// webhook, and an address given to a claim on a GlobalInClusterIPPool.
func checkInClusterIPAM(t *testing.T, lc *localCluster) {
	ctx := t.Context()
	pods := &corev1.PodList{}
	if err := lc.client.List(ctx, pods, client.InNamespace("caip-in-cluster-system")); err != nil {
		t.Fatal(err)
	}
	want := "/cluster-api-ipam-in-cluster-controller:" + clusterctl.IPAMVersion + "@sha256:"
	if len(pods.Items) == 0 || !strings.Contains(pods.Items[0].Spec.Containers[0].Image, want) {
		t.Errorf("caip-in-cluster does not run upstream's image %s…, locked by digest: %v", want, pods.Items)
	}
	pool := func(name, gateway string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "ipam.cluster.x-k8s.io/v1alpha2",
			"kind":       "GlobalInClusterIPPool",
			"metadata":   map[string]any{"name": name},
			"spec":       map[string]any{"addresses": []any{"192.168.10.0/29"}, "prefix": int64(24), "gateway": gateway},
		}}
	}
	// The webhook's certificate may reach its configuration a moment after its pod is ready:
	// a call that did not reach it is tried again, a refusal is the answer.
	eventually(t, 30*time.Second, "the webhook's answer to a pool with an IPv6 gateway", func() error {
		err := lc.client.Create(ctx, pool("e2e-bad-gateway", "fd00::1"))
		switch {
		case err != nil && strings.Contains(err.Error(), "failed calling webhook"):
			return err
		case err == nil || !strings.Contains(err.Error(), "denied the request") || !strings.Contains(err.Error(), "spec.gateway"):
			t.Fatalf("a pool of IPv4 addresses with an IPv6 gateway: got %v, want the webhook's refusal naming spec.gateway", err)
		}
		return nil
	})
	good := pool("e2e-nodes", "192.168.10.1")
	ipClaim := &ipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e2e-node"},
		Spec: ipamv1.IPAddressClaimSpec{PoolRef: ipamv1.IPPoolReference{
			APIGroup: "ipam.cluster.x-k8s.io", Kind: "GlobalInClusterIPPool", Name: good.GetName()}},
	}
	for _, o := range []client.Object{good, ipClaim} {
		eventually(t, 30*time.Second, "create "+o.GetName(), func() error {
			if err := lc.client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			return nil
		})
	}
	eventually(t, 30*time.Second, "an address for the claim", func() error {
		address := &ipamv1.IPAddress{}
		if err := lc.client.Get(ctx, client.ObjectKeyFromObject(ipClaim), address); err != nil {
			return err
		}
		if address.Spec.Address != "192.168.10.2" {
			return fmt.Errorf("address %s, want 192.168.10.2 (.0 is the network, .1 the gateway)", address.Spec.Address)
		}
		return nil
	})
}

// checkUpstreamKappController checks that the cluster's kapp-controller is upstream's: its pod
// runs the controller and its sidecarexec from the image `make images` built from kapp-controller's
// module (by its labels), and its aggregated API is Available and serves the management
// repository's Packages, named as TKG names them.
func checkUpstreamKappController(t *testing.T, lc *localCluster) {
	t.Helper()
	pods := &corev1.PodList{}
	if err := lc.client.List(t.Context(), pods, client.InNamespace("tkg-system"), client.MatchingLabels{"app": "kapp-controller"}); err != nil || len(pods.Items) != 1 {
		t.Fatalf("%d kapp-controller pods (%v), want 1", len(pods.Items), err)
	}
	var digests []string
	for _, c := range pods.Items[0].Spec.Containers {
		_, digest, _ := strings.Cut(c.Image, "@")
		digests = append(digests, digest)
	}
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	built, err := images.ReadLayout(filepath.Join(root, "bin", images.LayoutDir))
	if err != nil {
		t.Fatal(err)
	}
	var labels map[string]string
	for _, b := range built {
		if d, err := b.Image.Digest(); err == nil && len(digests) == 2 && digests[0] == d.String() && digests[1] == d.String() {
			cfg, err := b.Image.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			labels = cfg.Config.Labels
		}
	}
	if !upstreamBuild(labels, kappControllerModule, kappControllerVersion) {
		t.Errorf("kapp-controller's containers (%v) do not both run upstream's kapp-controller %s: labels %v", digests, kappControllerVersion, labels)
	}
	kubectl := kubectlOn(t, kubeconfigOf(t, lc))
	if out, err := kubectl("get", "apiservice", "v1alpha1.data.packaging.carvel.dev",
		"-o", `jsonpath={.spec.service.namespace}/{.spec.service.name} {.status.conditions[?(@.type=="Available")].status}`); err != nil || out != "tkg-system/packaging-api True" {
		t.Errorf("kubectl get apiservice v1alpha1.data.packaging.carvel.dev: %q, %v", out, err)
	}
	if out, err := kubectl("get", "packages", "-n", "tkg-system", "-o", "name"); err != nil ||
		!strings.Contains(out, "package.data.packaging.carvel.dev/kapp-controller.tanzu.vmware.com.0.50.0+vmware.1-tkg.1\n") {
		t.Errorf("kubectl get packages -n tkg-system: %v\n%s", err, out)
	}
}
