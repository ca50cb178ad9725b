package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	capvv1 "sigs.k8s.io/cluster-api-provider-vsphere/api/govmomi/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/images"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/scheme"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/test/testregistry"
	"github.com/slipway-dev/slipway/internal/test/vcentertest"
	"github.com/slipway-dev/slipway/internal/vsphere/prerequisites"
	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// vsphereManagementPods are seeds/003's management column on vSphere: the local management
// cluster's and CAPV, the vSphere CPI and CSI, tkr-vsphere-resolver and ako-operator (AKO itself,
// avi-system/ako, runs only with NSX Advanced Load Balancer, which slipway does not configure).
var vsphereManagementPods = func() map[string][]string {
	pods := map[string][]string{
		"capv-system":           {"capv-controller-manager"},
		"vmware-system-csi":     {"vsphere-csi-controller", "vsphere-csi-node"},
		"tkg-system-networking": {"ako-operator-controller-manager"},
	}
	for ns, names := range managementPods {
		pods[ns] = slices.Clone(names)
	}
	pods["kube-system"] = append(pods["kube-system"], "vsphere-cloud-controller-manager")
	pods["tkg-system"] = append(pods["tkg-system"], "tkr-vsphere-resolver-webhook-manager")
	return pods
}()

// vsphereWorkloadPods are seeds/003's workload column of a vSphere cluster with antrea. The
// column's capv-controller-manager and tanzu-capabilities-controller-manager are left out: TKG
// installs neither on workload clusters.
var vsphereWorkloadPods = map[string][]string{
	"kube-system": {"antrea-agent", "antrea-controller", "coredns", "etcd", "kube-apiserver", "kube-controller-manager", "kube-proxy",
		"kube-scheduler", "metrics-server", "vsphere-cloud-controller-manager"},
	"secretgen-controller": {"secretgen-controller"},
	"tkg-system":           {"kapp-controller"},
	"vmware-system-csi":    {"vsphere-csi-controller", "vsphere-csi-node"},
}

// nodeVM is what the test reads of a VM of the simulator.
type nodeVM struct {
	name, ip, version string
	on                bool
}

// folderVMs lists the VMs of /dc0/vm/folder0 that are not templates, by name.
func folderVMs(ctx context.Context, finder *find.Finder) (map[string]nodeVM, error) {
	vms, err := finder.VirtualMachineList(ctx, simulator.Folder+"/*")
	if err != nil && !strings.Contains(err.Error(), "not found") {
		return nil, err
	}
	out := map[string]nodeVM{}
	for _, vm := range vms {
		var props mo.VirtualMachine
		if err := vm.Properties(ctx, vm.Reference(), []string{"name", "config", "runtime.powerState", "guest.ipAddress"}, &props); err != nil {
			return nil, err
		}
		if props.Config == nil || props.Config.Template {
			continue
		}
		v := nodeVM{name: props.Name, on: props.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn,
			version: vcenter.VAppVersion(props.Config.VAppConfig)}
		if props.Guest != nil {
			v.ip = props.Guest.IpAddress
		}
		out[v.name] = v
	}
	return out, nil
}

// checkClusterVMs waits until the cluster's machines are VMs of folder0 cloned from the template
// of ovaVersion, powered on and reporting guest IPs.
func checkClusterVMs(t *testing.T, mc client.Client, finder *find.Finder, name, ovaVersion string, count int) {
	t.Helper()
	ctx := t.Context()
	eventually(t, 3*time.Minute, fmt.Sprintf("%d VMs of %s from the %s template, on, with guest IPs", count, name, ovaVersion), func() error {
		machines := &clusterv1.MachineList{}
		if err := mc.List(ctx, machines, client.MatchingLabels{clusterv1.ClusterNameLabel: name}); err != nil {
			return err
		}
		if len(machines.Items) != count {
			return fmt.Errorf("%d machines, want %d", len(machines.Items), count)
		}
		vms, err := folderVMs(ctx, finder)
		if err != nil {
			return err
		}
		for _, m := range machines.Items {
			vm, ok := vms[m.Name]
			switch {
			case !ok:
				return fmt.Errorf("machine %s has no VM in %s", m.Name, simulator.Folder)
			case !vm.on || vm.ip == "":
				return fmt.Errorf("VM %s: powered on %v, guest IP %q", vm.name, vm.on, vm.ip)
			case vm.version != ovaVersion:
				return fmt.Errorf("VM %s was cloned from the template of %q, want %q", vm.name, vm.version, ovaVersion)
			case !strings.HasPrefix(m.Spec.ProviderID, "vsphere://") || !m.Status.NodeRef.IsDefined():
				return fmt.Errorf("machine %s: providerID %q, node %q", m.Name, m.Spec.ProviderID, m.Status.NodeRef.Name)
			}
		}
		return nil
	})
}

// TestVSphereFlows runs the management-cluster and cluster flows on slipway's vCenter simulator,
// whose VMs boot as nodes of the local runtime: `management-cluster create -f` from a file shaped
// like seeds/000's tkg-mgmt-vc.yaml makes a bootstrap cluster with CAPV, CAPV clones and powers
// on the management cluster's VMs from the release's template, the objects move onto it and the
// bootstrap cluster is deleted; `cluster create tkg-vc-antrea -f` with seeds/001's variables,
// scale, upgrade (VMs cloned from the new release's template) and delete run on it; and
// `management-cluster delete` leaves no VM.
func TestVSphereFlows(t *testing.T) {
	registryAddr, repo := pushPackages(t)
	pushNodeImages(t, registryAddr, "v1.34.3", "v1.35.4")
	ctx := t.Context()
	store := cluster.Store{Root: filepath.Join(home, "local")}
	before, err := store.List()
	if err != nil {
		t.Fatal(err)
	}

	// The simulator serves as a vCenter elsewhere would: on an address of this host off the
	// local runtime's bridge, which no node reaches but through the host, the egress of its
	// VMs' nodes (CAPV after the move, the vSphere cloud provider) and of the bootstrap and
	// cleanup clusters' (CAPV before it).
	_, port, _ := net.SplitHostPort(vcentertest.FreeAddress(t))
	if out, err := runSlipway(t, "vsphere", "simulator", "start", "--address", net.JoinHostPort(offBridgeAddress(t), port)); err != nil {
		t.Fatalf("simulator start: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := runSlipwayContext(context.Background(), "vsphere", "simulator", "stop"); err != nil {
			t.Errorf("simulator stop: %v\n%s", err, out)
		}
	})
	endpoint, err := simulator.Daemon{Dir: filepath.Join(home, "vsphere", "simulator")}.Endpoint()
	if err != nil {
		t.Fatal(err)
	}
	vars := ""
	for _, v := range endpoint.Variables() {
		vars += fmt.Sprintf("%s: %q\n", v[0], v[1])
	}
	dir := t.TempDir()
	write := func(t *testing.T, name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const key = "VSPHERE_SSH_AUTHORIZED_KEY: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfcGigZ63XnMoqRl2PKwyhzQ6ChfGxQJhqvD/5SujkZ e2e@example\n"
	// Each cluster's control-plane endpoint: an address of the bridge's block for them, which
	// the simulator's hypervisor serves as kube-vip would.
	const mgmtEndpoint, wcEndpoint = vcenter.SimulatorEndpoint, "198.18.255.2"
	mgmtHeader := "CLUSTER_NAME: tkg-mgmt-vc\nCLUSTER_PLAN: dev\nINFRASTRUCTURE_PROVIDER: vsphere\n" +
		"OS_NAME: ubuntu\nOS_VERSION: \"20.04\"\nOS_ARCH: amd64\nVSPHERE_CONTROL_PLANE_ENDPOINT: " + mgmtEndpoint + "\n" + key
	mgmtFile := write(t, "tkg-mgmt-vc.yaml", mgmtHeader+vars)
	// seeds/000's file leaves the thumbprint to the prompt that its command's --yes answers.
	var thumbprint, seedsVars string
	for _, line := range strings.SplitAfter(vars, "\n") {
		if v, ok := strings.CutPrefix(line, "VSPHERE_TLS_THUMBPRINT: "); ok {
			thumbprint = strings.Trim(strings.TrimSpace(v), `"`)
			continue
		}
		seedsVars += line
	}
	seedsFile := write(t, "tkg-mgmt-vc-seeds.yaml", mgmtHeader+seedsVars)

	// The copy on this host of the Kubernetes images that the workload cluster pulls from, as at
	// a site without internet: it serves until the test ends, through the workload cluster's
	// upgrade.
	copyRegistry := testregistry.StartOnEveryAddress(t)
	pushNodeImages(t, copyRegistry, "v1.34.3", "v1.35.4")
	copyRepository := copyRegistry + "/tkg"

	// Each phase needs what the ones before it made (the refusal, that no template is there yet):
	// a failed phase ends the test.
	// What a phase makes for the phases after it is cleaned up when the whole test ends, not the
	// phase: f is given the test's t.
	atTestEnd := func(f func(t *testing.T)) { t.Cleanup(func() { f(t) }) }
	// What the phases make for the ones after them.
	var (
		ovaVersions map[string]string
		mc          client.Client
		finder      *find.Finder
		wc          client.Client
	)

	phase(t, "a create without a template refused", func(t *testing.T) {
		// seeds/000's command line, with tanzu replaced by slipway: its checks of the vCenter run
		// and print as TKG's do, and without a template of the release nothing is created and the
		// fix is named.
		out, err := runSlipwayTimeout(t, 5*time.Minute, "management-cluster", "create", "--yes", "-v", "9", "--deploy-tkg-on-vSphere7", "-f", seedsFile,
			"--package-repository", repo, "-t", "10m")
		if err == nil || !strings.Contains(out, "unable to find VM Template associated with TanzuKubernetesRelease v1.35.4+vmware.1-tkg.1") {
			t.Errorf("management-cluster create without a template: want a refusal, got %v:\n%s", err, out)
		}
		checkLinesInOrder(t, "management-cluster create", out, "Continuing with the vSphere thumbprint "+thumbprint+" (-y)", "vSphere 7.0 Environment Detected.",
			`Setting config variable "VSPHERE_DATACENTER" to value "/dc0"`, "Checking if VSPHERE_CONTROL_PLANE_ENDPOINT "+mgmtEndpoint+" is already in use",
			"unable to find VM Template")
		if after, _ := store.List(); len(after) != len(before) {
			t.Fatalf("a refused management-cluster create made a local cluster")
		}
	})

	phase(t, "the node OVAs imported", func(t *testing.T) {
		// The node OVAs of both releases, imported as templates.
		ovaVersions = map[string]string{}
		for _, release := range []string{"v1.34.3", "v1.35.4"} {
			image := filepath.Join(dir, release+".ova")
			out, err := runSlipway(t, "vsphere", "ova", "build", "--kubernetes-release", release+"+vmware.1-tkg.1", "-o", image)
			if err != nil {
				t.Fatalf("ova build: %v\n%s", err, out)
			}
			ovaVersions[release] = release + "+vmware.1-tkg.1-ubuntu-2004"
			template := simulator.Folder + "/ubuntu-2004-kube-" + release + "+vmware.1"
			if out, err := runSlipway(t, "vsphere", "ova", "import", image, "-f", mgmtFile); err != nil || !strings.Contains(out, "as the VM template "+template) {
				t.Fatalf("ova import: %v\n%s", err, out)
			}
		}
	})

	phase(t, "the client before the bootstrap", func(t *testing.T) {
		// seeds/001's client command lines before the bootstrap, with tanzu replaced by slipway.
		for _, line := range []struct {
			args []string
			want string
		}{
			{[]string{"plugin", "clean"}, "no installed plugins to clean up"},
			{[]string{"plugin", "repo", "update", "-b", "tanzu-cli-framework", "core"}, "core"},
			{[]string{"plugin", "list"}, "management-cluster"},
			{[]string{"version"}, "buildDate: "},
		} {
			if out, err := runSlipwayIn(t, dir, time.Minute, line.args...); err != nil || !strings.Contains(out, line.want) {
				t.Errorf("slipway %s: %v\n%s", strings.Join(line.args, " "), err, out)
			}
		}
		checkContextAware(t, dir, "")
	})

	phase(t, "the management cluster made in the installer", func(t *testing.T) {
		needPhase(t, ovaVersions != nil, "the node OVAs imported")
		// The management cluster, made in the installer UI as a user would make it (the wizard on
		// the simulator, the review, the deploy followed to its end), runs the same flow.
		uiCtx, stopUI := context.WithTimeout(ctx, 20*time.Minute)
		defer stopUI()
		url := serveUI(t, uiCtx, "management-cluster", "create", "--ui", "--browser", "none", "--bind", "127.0.0.1:0",
			"--package-repository", repo, "-t", "10m")
		// Before the deploy, so that a failed one's kept bootstrap cluster goes too.
		atTestEnd(func(t *testing.T) { deleteAddedClusters(t, store, before) })
		start := time.Now()
		printed := runBrowser(t, uiCtx, "management.mjs", url, "tkg-mgmt-vc", endpoint.Address, endpoint.Username, endpoint.Password, mgmtEndpoint)
		t.Logf("management-cluster create on vSphere through the installer took %s", time.Since(start).Round(time.Second))
		stopUI()
		_, deployLog, _ := strings.Cut(printed, "--- deploy log\n")
		deployLog, _, _ = strings.Cut(deployLog, "--- end of deploy log")
		checkLinesInOrder(t, "the installer's deploy", deployLog, "vSphere 7.0 Environment Detected.",
			`Setting config variable "VSPHERE_DATACENTER" to value "/dc0"`, "Checking if VSPHERE_CONTROL_PLANE_ENDPOINT "+mgmtEndpoint+" is already in use",
			"Setting up bootstrapper...", "Installing providers on ", "Start creating management cluster...",
			"Moving all Cluster API objects from bootstrap cluster to management cluster...", "Deleting kind cluster: tkg-kind-", "Management cluster created!")
		// The bootstrap cluster is gone; the management cluster's nodes are its VMs.
		var added []string
		for _, s := range addedClusters(t, store, before) {
			added = append(added, s.Name)
			if s.Owner == nil || s.Owner.VCenter != endpoint.Address {
				t.Errorf("local cluster %s is not made of the simulator's VMs: owner %+v", s.Name, s.Owner)
			}
			if !slices.Equal(s.Egress, []string{endpoint.Address}) {
				t.Errorf("local cluster %s reaches %q through the host, want the simulator %s", s.Name, s.Egress, endpoint.Address)
			}
		}
		if len(added) != 1 || added[0] != "tkg-mgmt-vc" {
			t.Fatalf("local clusters added: %v, want only tkg-mgmt-vc (the bootstrap cluster deleted)", added)
		}

		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(),
			&clientcmd.ConfigOverrides{CurrentContext: "tkg-mgmt-vc-admin@tkg-mgmt-vc"}).ClientConfig()
		if err != nil {
			t.Fatalf("the management cluster's context: %v", err)
		}
		s := scheme.New()
		if err := capvv1.AddToScheme(s); err != nil {
			t.Fatal(err)
		}
		mc, err = client.New(cfg, client.Options{Scheme: s})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mgmt := &localCluster{name: "tkg-mgmt-vc", config: cfg, client: mc, cs: cs}
		atTestEnd(func(t *testing.T) {
			if t.Failed() {
				for _, ns := range []string{"capv-system", "tkg-system", "vmware-system-csi", "default"} {
					dumpPods(t, mgmt, ns)
				}
			}
		})
		vc, _, err := prerequisites.Connect(ctx, prerequisites.Environment{Server: endpoint.Address, Username: endpoint.Username,
			Password: endpoint.Password, Thumbprint: endpoint.Thumbprint})
		if err != nil {
			t.Fatal(err)
		}
		finder = find.NewFinder(vc.Client)
	})

	phase(t, "the management cluster's VMs, pods and packages", func(t *testing.T) {
		needPhase(t, mc != nil, "the management cluster made in the installer")
		// Its nodes are VMs cloned from the release's template; its pods are seeds/003's
		// management column.
		checkClusterVMs(t, mc, finder, "tkg-mgmt-vc", ovaVersions["v1.35.4"], 2)
		checkPods(t, mc, "the management column", vsphereManagementPods)
		// Upstream clusterctl describes it, CAPV's VSphereCluster included, and would move it.
		checkClusterctl(t, "tkg-mgmt-vc", "VSphereCluster")
		// Its ClusterBootstrap, written by the CLI on it before the move, names vSphere's CPI and CSI
		// once its Cluster is there: they stay its packages after the move.
		eventually(t, time.Minute, "the management cluster's ClusterBootstrap naming vSphere's CPI and CSI", func() error {
			cb := &runv1alpha3.ClusterBootstrap{}
			if err := mc.Get(ctx, client.ObjectKey{Namespace: "tkg-system", Name: "tkg-mgmt-vc"}, cb); err != nil {
				return err
			}
			if cb.Spec.CPI == nil || !strings.HasPrefix(cb.Spec.CPI.RefName, "vsphere-cpi.") || cb.Spec.CSI == nil || !strings.HasPrefix(cb.Spec.CSI.RefName, "vsphere-csi.") {
				return fmt.Errorf("CPI %+v, CSI %+v", cb.Spec.CPI, cb.Spec.CSI)
			}
			return nil
		})
		pods := &corev1.PodList{}
		if err := mc.List(ctx, pods, client.InNamespace("capv-system")); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning || !strings.Contains(p.Spec.Containers[0].Image, "/cluster-api-vsphere-controller") || images.IsStandIn(p.Spec.Containers[0].Image, nil) {
				t.Errorf("CAPV's pod %s is %s with image %s: it must run CAPV's image", p.Name, p.Status.Phase, p.Spec.Containers[0].Image)
			}
		}
	})

	phase(t, "a workload cluster with seeds/001's variables", func(t *testing.T) {
		needPhase(t, mc != nil, "the management cluster made in the installer")
		// A workload cluster with seeds/001's variables, at the older release named as seeds/001
		// names it, by --tkr, whose Kubernetes images come from the copy on this host, as at a
		// site without internet: TKR_DATA names TKG_CUSTOM_IMAGE_REPOSITORY, and its VMs reach the
		// copy.
		wcFile := write(t, "tkg-vc-antrea.yaml", "CLUSTER_NAME: tkg-vc-antrea\nCLUSTER_PLAN: dev\nINFRASTRUCTURE_PROVIDER: vsphere\nCNI: antrea\n"+
			"OS_NAME: ubuntu\nOS_VERSION: \"20.04\"\nOS_ARCH: amd64\nVSPHERE_CONTROL_PLANE_ENDPOINT: "+wcEndpoint+"\n"+
			"TKG_CUSTOM_IMAGE_REPOSITORY: "+copyRepository+"\n"+key+vars)
		// seeds/001's command lines after the management cluster, with tanzu replaced by slipway, in
		// the directory of their files; its release is one of slipway's catalogue.
		checkContextAware(t, dir, "tkg-mgmt-vc")
		checkClusterListJSON(t, dir)
		if out, err := runSlipwayIn(t, dir, time.Minute, "cluster", "version"); err != nil || strings.TrimSpace(out) == "" {
			t.Errorf("cluster version: %v\n%s", err, out)
		}
		start := time.Now()
		out, err := runSlipwayIn(t, dir, 10*time.Minute, "kubernetes", "cluster", "create", "tkg-vc-antrea", "-v", "9", "-f", filepath.Base(wcFile),
			"--tkr", "v1.34.3---vmware.1-tkg.1")
		t.Logf("cluster create on vSphere took %s:\n%s", time.Since(start).Round(time.Second), out)
		if err != nil {
			t.Fatalf("cluster create: %v", err)
		}
		for _, line := range []string{`Setting config variable "VSPHERE_FOLDER" to value "/dc0/vm/folder0"`,
			"successfully reconciled package: 'tkg-vc-antrea-antrea' in namespace: 'tkg-system'",
			"successfully reconciled package: 'tkg-vc-antrea-vsphere-cpi' in namespace: 'tkg-system'",
			"successfully reconciled package: 'tkg-vc-antrea-vsphere-csi' in namespace: 'tkg-system'",
			"Workload cluster 'tkg-vc-antrea' created"} {
			if !strings.Contains(out, line) {
				t.Errorf("cluster create's output lacks %q", line)
			}
		}
		checkClusterVMs(t, mc, finder, "tkg-vc-antrea", ovaVersions["v1.34.3"], 2)
		wcKubeconfig := filepath.Join(dir, "wc.kubeconfig")
		if out, err := runSlipway(t, "cluster", "kubeconfig", "get", "tkg-vc-antrea", "--admin", "--export-file", wcKubeconfig); err != nil {
			t.Fatalf("cluster kubeconfig get: %v\n%s", err, out)
		}
		wcConfig, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: wcKubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: "tkg-vc-antrea-admin@tkg-vc-antrea"}).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		wc, err = client.New(wcConfig, client.Options{Scheme: scheme.New()})
		if err != nil {
			t.Fatal(err)
		}
		checkPods(t, wc, "the workload column", vsphereWorkloadPods)
		checkPullsFromTheCopy(t, wc, store, "tkg-vc-antrea", copyRepository)
		checkCredentialsUpdate(t, wc, endpoint)
	})

	phase(t, "faults of the workload cluster's real nodes", func(t *testing.T) {
		needPhase(t, wc != nil, "a workload cluster with seeds/001's variables")
		// The fault suite of real nodes on its VMs (a control plane and a worker): containerd and the
		// kubelet started again by the node's init, kube-scheduler and kapp-controller by the
		// kubelet, the control-plane endpoint's load balancer by the simulator's hypervisor.
		checkRealNodeFaults(t, wc, "tkg-vc-antrea", store,
			kappController,
			restartedByHypervisor(t, wc, "tkg-vc-antrea"))
	})

	phase(t, "the workload cluster upgraded", func(t *testing.T) {
		needPhase(t, wc != nil, "a workload cluster with seeds/001's variables")
		// Upgrade: every machine is replaced by a VM cloned from the new release's template. It
		// comes before the scale, so it rolls two machines, not three: TestManagementClusterCreate
		// upgrades a cluster of two workers.
		start := time.Now()
		out, err := runSlipwayTimeout(t, 15*time.Minute, "cluster", "upgrade", "tkg-vc-antrea", "--tkr", "v1.35", "-y", "-t", "10m")
		t.Logf("cluster upgrade on vSphere took %s:\n%s", time.Since(start).Round(time.Second), out)
		if err != nil || !strings.Contains(out, "Cluster 'tkg-vc-antrea' successfully upgraded to kubernetes version 'v1.35.4+vmware.1'") {
			t.Fatalf("cluster upgrade: %v", err)
		}
		checkClusterVMs(t, mc, finder, "tkg-vc-antrea", ovaVersions["v1.35.4"], 2)
		checkPullsFromTheCopy(t, wc, store, "tkg-vc-antrea", copyRepository)
	})

	phase(t, "the workload cluster scaled", func(t *testing.T) {
		needPhase(t, wc != nil, "a workload cluster with seeds/001's variables")
		// Scale: one more worker VM, cloned from the upgraded release's template.
		if out, err := runSlipway(t, "cluster", "scale", "tkg-vc-antrea", "-w", "2"); err != nil {
			t.Fatalf("cluster scale: %v\n%s", err, out)
		}
		checkClusterVMs(t, mc, finder, "tkg-vc-antrea", ovaVersions["v1.35.4"], 3)
	})

	phase(t, "the workload cluster deleted", func(t *testing.T) {
		needPhase(t, wc != nil, "a workload cluster with seeds/001's variables")
		// Delete: its VMs are destroyed and nothing of it is left.
		vms, err := folderVMs(ctx, finder)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := runSlipwayTimeout(t, 5*time.Minute, "cluster", "delete", "tkg-vc-antrea", "-y", "-t", "3m"); err != nil || !strings.Contains(out, "Workload cluster 'tkg-vc-antrea' deleted") {
			t.Fatalf("cluster delete: %v\n%s", err, out)
		}
		checkNothingLeft(t, mc, store, "tkg-mgmt-vc", "default", "tkg-vc-antrea")
		eventually(t, time.Minute, "the workload cluster's VMs destroyed", func() error {
			now, err := folderVMs(ctx, finder)
			if err != nil {
				return err
			}
			for name := range vms {
				if _, ok := now[name]; ok && strings.HasPrefix(name, "tkg-vc-antrea-") {
					return fmt.Errorf("VM %s is still there", name)
				}
			}
			return nil
		})
	})

	phase(t, "management-cluster delete", func(t *testing.T) {
		needPhase(t, finder != nil, "the management cluster made in the installer")
		// management-cluster delete destroys the management cluster's VMs: none is left.
		start := time.Now()
		out, err := runSlipwayTimeout(t, 15*time.Minute, "management-cluster", "delete", "tkg-mgmt-vc", "-y", "-t", "10m")
		t.Logf("management-cluster delete on vSphere took %s:\n%s", time.Since(start).Round(time.Second), out)
		if err != nil || !strings.Contains(out, "Management cluster deleted!") {
			t.Fatalf("management-cluster delete: %v", err)
		}
		eventually(t, time.Minute, "no VM and no local cluster left", func() error {
			if vms, err := folderVMs(ctx, finder); err != nil || len(vms) > 0 {
				return fmt.Errorf("VMs left: %v (%v)", vms, err)
			}
			if after, _ := store.List(); len(after) != len(before) {
				return fmt.Errorf("%d local clusters, %d before", len(after), len(before))
			}
			return nil
		})
	})
}

// checkPullsFromTheCopy checks that a cluster of the simulator's VMs pulls its Kubernetes images
// from the copy at repository: its nodes reach the copy's registry, and kubeadm ran the control
// plane and kube-proxy from it.
func checkPullsFromTheCopy(t *testing.T, c client.Client, store cluster.Store, name, repository string) {
	t.Helper()
	ctx := t.Context()
	registry, _, _ := strings.Cut(repository, "/")
	if spec, err := store.Get(name); err != nil || !slices.Equal(spec.HostRegistries, []string{registry}) {
		t.Errorf("the VMs of %s reach %v (%v), want the copy's registry %s", name, spec, err, registry)
	}
	kubeadmConfig := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "kubeadm-config"}, kubeadmConfig); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(kubeadmConfig.Data["ClusterConfiguration"], "imageRepository: "+repository+"\n") {
		t.Errorf("kubeadm's ClusterConfiguration of %s does not name the copy %s:\n%s", name, repository, kubeadmConfig.Data["ClusterConfiguration"])
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace("kube-system")); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		for _, component := range []string{"kube-apiserver", "kube-proxy"} {
			if strings.HasPrefix(p.Name, component+"-") && !strings.HasPrefix(p.Spec.Containers[0].Image, repository+"/"+component+":") {
				t.Errorf("pod %s of %s runs %s, not the copy's", p.Name, name, p.Spec.Containers[0].Image)
			}
		}
	}
}

// restartedByHypervisor is checkRealNodeFaults' load-balancer check for a cluster of the
// simulator's VMs: the hypervisor, which serves their control-plane endpoint as kube-vip would,
// starts it again within restartBound, as a kubelet restarts kube-vip's static pod
// (killLoadBalancer); nothing counts it.
func restartedByHypervisor(t *testing.T, c client.Client, name string) func(string) repair {
	return func(pidPath string) repair {
		r := killLoadBalancer(t, c, name, pidPath)
		r.kind = "load balancer (the hypervisor's)"
		return r
	}
}

// checkCredentialsUpdate rotates the vSphere credentials of tkg-vc-antrea and of the management
// cluster as TKG's `credentials update`: a password the vCenter refuses changes nothing; the
// simulator's own are accepted and reach the workload cluster's CPI and CSI Secrets.
func checkCredentialsUpdate(t *testing.T, wc client.Client, endpoint simulator.Endpoint) {
	t.Helper()
	out, err := runSlipway(t, "cluster", "credentials", "update", "tkg-vc-antrea", "--vsphere-user", endpoint.Username, "--vsphere-password", "wrong")
	if err == nil || !strings.Contains(out, "the new credentials were refused, nothing was changed") {
		t.Errorf("cluster credentials update with a wrong password: want a refusal, got %v\n%s", err, out)
	}
	out, err = runSlipway(t, "cluster", "credentials", "update", "tkg-vc-antrea", "--vsphere-user", endpoint.Username, "--vsphere-password", endpoint.Password)
	if err != nil || !strings.Contains(out, "Updating credentials for workload cluster successful!") {
		t.Errorf("cluster credentials update: %v\n%s", err, out)
	}
	out, err = runSlipway(t, "management-cluster", "credentials", "update", "--vsphere-user", endpoint.Username, "--vsphere-password", endpoint.Password, "--cascading")
	if err != nil || !strings.Contains(out, `Updating credentials for workload cluster "tkg-vc-antrea" ...`) || !strings.Contains(out, "Updating credentials for management cluster successful") {
		t.Errorf("management-cluster credentials update --cascading: %v\n%s", err, out)
	}
	eventually(t, 2*time.Minute, "the vSphere CPI's and CSI's credentials on the workload cluster", func() error {
		cpi := &corev1.Secret{}
		if err := wc.Get(t.Context(), client.ObjectKey{Namespace: "kube-system", Name: "cloud-provider-vsphere-credentials"}, cpi); err != nil {
			return err
		}
		host := strings.Split(endpoint.Address, ":")[0]
		var user string
		var keys []string
		for k, v := range cpi.Data {
			keys = append(keys, k)
			if strings.HasSuffix(k, ".username") && strings.HasPrefix(k, host) {
				user = string(v)
			}
		}
		if user != endpoint.Username {
			return fmt.Errorf("cloud-provider-vsphere-credentials has keys %v, no %s…username of %s", keys, host, endpoint.Username)
		}
		csi := &corev1.Secret{}
		if err := wc.Get(t.Context(), client.ObjectKey{Namespace: "vmware-system-csi", Name: "csi-vsphere-config"}, csi); err != nil {
			return err
		}
		if conf := string(csi.Data["csi-vsphere.conf"]); !strings.Contains(conf, `user = "`+endpoint.Username+`"`) {
			return fmt.Errorf("csi-vsphere.conf:\n%s", conf)
		}
		return nil
	})
}

// runSlipwayIn runs the binary in dir, as a user runs a command line next to its files.
func runSlipwayIn(t *testing.T, dir string, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, slipway, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// checkContextAware reads `config get` as seeds/001's script does (yq of
// .clientOptions.features.global.context-aware-cli-for-plugins): it is "true", and the management
// cluster server, when not empty, is among the servers.
func checkContextAware(t *testing.T, dir, server string) {
	t.Helper()
	out, err := slipwayOutput(t, dir, "config", "get")
	if err != nil {
		t.Fatalf("config get: %v\n%s", err, out)
	}
	var cfg struct {
		ClientOptions struct {
			Features map[string]map[string]string `json:"features"`
		} `json:"clientOptions"`
		Servers []struct{ Name string } `json:"servers"`
	}
	if err := yaml.Unmarshal([]byte(out), &cfg); err != nil {
		t.Fatalf("config get: %v\n%s", err, out)
	}
	if cfg.ClientOptions.Features["global"]["context-aware-cli-for-plugins"] != "true" {
		t.Errorf("config get: context-aware-cli-for-plugins is not true:\n%s", out)
	}
	if server != "" && !slices.ContainsFunc(cfg.Servers, func(s struct{ Name string }) bool { return s.Name == server }) {
		t.Errorf("config get lists no server %s:\n%s", server, out)
	}
}

// checkClusterListJSON runs seeds/001's `cluster list --include-management-cluster -A
// --output=json` and finds the management cluster as seeds/001's output shows it.
// Its status comes from the Cluster's conditions, which a loaded host may hold back for a few
// probes: the listing is asked again for up to two minutes, and the wait logged.
func checkClusterListJSON(t *testing.T, dir string) {
	t.Helper()
	asked, tries := time.Now(), 0
	envtest.EventuallyEvery(t, 2*time.Minute, 3*time.Second, "cluster list showing tkg-mgmt-vc running", func() error {
		err := clusterListJSON(t, dir)
		if tries++; err != nil && tries == 1 {
			// What held it back is worth knowing even when a later read passes.
			t.Logf("cluster list, first read: %v", err)
		}
		return err
	})
	t.Logf("cluster list showed tkg-mgmt-vc running after %s", time.Since(asked).Round(100*time.Millisecond))
}

// clusterListJSON says how seeds/001's listing differs from what it shows of tkg-mgmt-vc.
func clusterListJSON(t *testing.T, dir string) error {
	out, err := slipwayOutput(t, dir, "cluster", "list", "--include-management-cluster", "-A", "--output=json")
	if err != nil {
		return fmt.Errorf("cluster list: %v\n%s", err, out)
	}
	var listed []struct {
		Name, Namespace, Status, Plan, ControlPlane, Workers, Kubernetes, TKR string
		Roles                                                                 []string
		Labels                                                                map[string]string
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		return fmt.Errorf("cluster list: %v\n%s", err, out)
	}
	for _, c := range listed {
		if c.Name != "tkg-mgmt-vc" {
			continue
		}
		if c.Namespace != "tkg-system" || c.Status != "running" || c.Plan != "dev" || c.ControlPlane != "1/1" || c.Workers != "1/1" ||
			!strings.HasPrefix(c.Kubernetes, "v1.35.4+vmware.1") || !slices.Equal(c.Roles, []string{"management"}) ||
			c.TKR != "v1.35.4---vmware.1-tkg.1" || !hasKey(c.Labels, "cluster-role.tkg.tanzu.vmware.com/management") ||
			c.Labels["tkg.tanzu.vmware.com/cluster-name"] != "tkg-mgmt-vc" {
			return fmt.Errorf("cluster list shows the management cluster as %+v:\n%s", c, out)
		}
		return nil
	}
	return fmt.Errorf("cluster list --include-management-cluster -A lists no tkg-mgmt-vc:\n%s", out)
}

// hasKey says m holds key, whatever its value.
func hasKey(m map[string]string, key string) bool {
	_, ok := m[key]
	return ok
}

// offBridgeAddress gives this host, until the test ends, an address that is neither loopback nor
// on the local runtime's bridge (TEST-NET-3's 203.0.113.8, on the loopback interface), as the
// address of a vCenter elsewhere, and returns it.
func offBridgeAddress(t *testing.T) string {
	t.Helper()
	const addr = "203.0.113.8"
	// replace, not add: an address a killed run left is taken over rather than refused.
	if out, err := exec.Command("ip", "addr", "replace", addr+"/32", "dev", "lo").CombinedOutput(); err != nil {
		t.Fatalf("ip addr replace %s: %v: %s", addr, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "addr", "del", addr+"/32", "dev", "lo").Run() })
	return addr
}
