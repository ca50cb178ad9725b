package vm

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/images"
	"github.com/slipway-dev/slipway/internal/local/hostnet"
	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/local/registry"
)

const testVersion = "v1.35.4"

// userData is a control-plane node's cloud-config as Cluster API's kubeadm bootstrap provider
// writes it: a Jinja template naming the node by its host name, kubeadm's configuration written
// to /run/kubeadm, then kubeadm init, which also deploys kube-proxy and CoreDNS.
func userData(address netip.Addr, token string) string {
	return fmt.Sprintf(`## template: jinja
#cloud-config
write_files:
-   path: /run/kubeadm/kubeadm.yaml
    owner: root:root
    permissions: '0640'
    content: |
      apiVersion: kubeadm.k8s.io/v1beta4
      kind: InitConfiguration
      bootstrapTokens:
      - token: "%[3]s"
      localAPIEndpoint:
        advertiseAddress: %[1]s
      nodeRegistration:
        name: '{{ ds.meta_data.local_hostname }}'
        criSocket: unix:///run/containerd/containerd.sock
      ---
      apiVersion: kubeadm.k8s.io/v1beta4
      kind: ClusterConfiguration
      kubernetesVersion: %[2]s+vmware.1
      imageRepository: projects.registry.vmware.com/tkg
      controlPlaneEndpoint: %[1]s:6443
      etcd:
        local:
          imageTag: v3.6.5_vmware.2
      dns:
        imageRepository: projects.registry.vmware.com/tkg
        imageTag: v1.12.4_vmware.1
      networking:
        podSubnet: 100.96.0.0/11
        serviceSubnet: 100.64.0.0/13
-   path: /run/cluster-api/placeholder
    owner: root:root
    permissions: '0640'
    content: "makes /run/cluster-api, as Cluster API's bootstrap data does"
runcmd:
  - 'kubeadm init --config /run/kubeadm/kubeadm.yaml && echo success > /run/cluster-api/bootstrap-success.complete'
`, address, testVersion, token)
}

// joinData is a worker's cloud-config: kubeadm join through the control plane's bootstrap token.
func joinData(endpoint netip.Addr, token string) string {
	return fmt.Sprintf(`## template: jinja
#cloud-config
write_files:
-   path: /run/kubeadm/kubeadm-join-config.yaml
    owner: root:root
    permissions: '0640'
    content: |
      apiVersion: kubeadm.k8s.io/v1beta4
      kind: JoinConfiguration
      discovery:
        bootstrapToken:
          apiServerEndpoint: %[1]s:6443
          token: "%[2]s"
          unsafeSkipCAVerification: true
      nodeRegistration:
        name: '{{ ds.meta_data.local_hostname }}'
        criSocket: unix:///run/containerd/containerd.sock
runcmd:
  - kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml
`, endpoint, token)
}

// testNode is one node the test makes.
type testNode struct {
	dir, name string
	address   netip.Addr
}

// newTestNode creates a node at address, which the test takes at the top of the range, clear of
// the runtime's.
func newTestNode(t *testing.T, root, mirror string, address netip.Addr, userData func(netip.Addr) string, egress ...netip.AddrPort) testNode {
	return newTestNodeNamed(t, root, mirror, address, userData, nil, egress...)
}

// newTestNodeNamed is newTestNode with named egress destinations.
func newTestNodeNamed(t *testing.T, root, mirror string, address netip.Addr, userData func(netip.Addr) string, names map[string][]netip.Addr, egress ...netip.AddrPort) testNode {
	t.Helper()
	n := testNode{dir: filepath.Join(t.TempDir(), "node"), name: fmt.Sprintf("vmtest-%d", rand.IntN(100000)), address: address}
	spec := Spec{Name: n.name, Address: address, BinDir: filepath.Join(root, "bin", "k8s", testVersion),
		SandboxImage: "projects.registry.vmware.com/tkg/pause:3.10.1",
		Mirrors:      map[string]string{"projects.registry.vmware.com": mirror, "ghcr.io": mirror}, Egress: egress, EgressNames: names}
	if err := Create(n.dir, spec, []byte(userData(address))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, n.dir)
		}
		_ = Delete(n.dir)
	})
	return n
}

// TestMain runs the test binary as a client inside a node's network namespace when
// VMTEST_CLIENT asks it to: "resolve NAME SERVER", "get URL", "dial ADDRESS" or "read ADDRESS".
func TestMain(m *testing.M) {
	if args := strings.Fields(os.Getenv("VMTEST_CLIENT")); len(args) > 0 {
		out, err := netClient(args)
		fmt.Print(out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func netClient(args []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	switch {
	case args[0] == "resolve" && len(args) == 3:
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, args[2])
		}}
		addrs, err := r.LookupHost(ctx, args[1])
		return strings.Join(addrs, " "), err
	case args[0] == "get" && len(args) == 2:
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[1], nil)
		if err != nil {
			return "", err
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test reaches a Service by address
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		return resp.Status, nil
	case args[0] == "dial" && len(args) == 2:
		// What a TCP connection to the address meets: "connected", or why not and when.
		start := time.Now()
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", args[1])
		if err != nil {
			return fmt.Sprintf("%v after %s", err, time.Since(start).Round(time.Millisecond)), nil
		}
		conn.Close()
		return "connected", nil
	case args[0] == "read" && len(args) == 2:
		// The first line the server at the address says.
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", args[1])
		if err != nil {
			return "", err
		}
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		return strings.TrimSpace(line), err
	}
	return "", fmt.Errorf("unknown client request %q", args)
}

// inNode runs the test binary's client in the node's network namespace.
func inNode(n testNode, request string) (string, error) {
	cmd := exec.Command("nsenter", "--net="+namespacePath(namespaceName(n.dir)), "--", os.Args[0])
	cmd.Env = append(os.Environ(), "VMTEST_CLIENT="+request)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// TestNodeBootsWithKubeadm makes two nodes of namespaces and boots them from Cluster API-style
// cloud-init: kubeadm init makes a real control plane whose static pods run as containers under
// the node's containerd, and kubeadm join adds a worker. Both become Ready on the runtime's pod
// network; CoreDNS answers through its Service (kube-proxy) and from the other node (routes);
// logs are read through the kubelet; containerd and the kubelet come back after SIGKILL, and a
// node whose init process is killed is reset by Start; Delete leaves no process, namespace,
// veth, cgroup or mount.
func TestNodeBootsWithKubeadm(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("a node of namespaces needs root: run the tests as root")
	}
	for _, bin := range []string{"containerd", "runc", "nsenter", "ip", "iptables"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not installed: apt-get install containerd runc util-linux iproute2 iptables (.ci/run installs them)", bin)
		}
	}
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := EnsureBridge(); err != nil {
		t.Fatal(err)
	}
	mirror := serveImages(t, filepath.Join(root, "bin", images.LayoutDir))
	token := fmt.Sprintf("%06x.%016x", rand.Uint32()&0xffffff, rand.Uint64())
	octet := 2 + rand.IntN(240)
	cp := newTestNode(t, root, mirror, netip.AddrFrom4([4]byte{198, 19, 254, byte(octet)}),
		func(a netip.Addr) string { return userData(a, token) })
	// The worker has an egress destination: a server of this host off the bridge, by a name.
	offBridge := serveOffBridge(t)
	worker := newTestNodeNamed(t, root, mirror, netip.AddrFrom4([4]byte{198, 19, 254, byte(octet + 1)}),
		func(netip.Addr) string { return joinData(cp.address, token) }, map[string][]netip.Addr{egressName: {offBridge.Addr()}}, offBridge)
	exe := buildSlipway(t, root)
	start := time.Now()
	for _, n := range []testNode{cp, worker} {
		if _, err := Start(n.dir, exe); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []testNode{cp, worker} {
		var status string
		if err := wait.PollUntilContextTimeout(ctx, time.Second, 4*time.Minute, true, func(context.Context) (bool, error) {
			var booted bool
			status, booted = Booted(n.dir)
			return booted, nil
		}); err != nil {
			t.Fatalf("cloud-init of %s did not finish: %v", n.name, err)
		}
		if status != "finished" {
			t.Fatalf("cloud-init of %s: %s", n.name, status)
		}
		t.Logf("cloud-init of %s (kubeadm) finished %s after the nodes started", n.name, time.Since(start).Round(time.Millisecond))
	}

	client := adminClient(t, cp.dir)
	components := []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}
	waitForPods(t, client, cp.name, components)
	t.Logf("the control plane's pods ran %s after the nodes started", time.Since(start).Round(time.Millisecond))
	for _, c := range components {
		logs, err := client.CoreV1().Pods("kube-system").GetLogs(c+"-"+cp.name, &corev1.PodLogOptions{TailLines: ptr.To[int64](5)}).DoRaw(ctx)
		if err != nil || len(logs) == 0 {
			t.Errorf("logs of %s through the kubelet: %v %q", c, err, logs)
		}
	}
	dns := waitForNetwork(t, client, cp, worker)
	t.Logf("both nodes and CoreDNS were ready %s after the nodes started", time.Since(start).Round(time.Millisecond))
	checkNetwork(t, []testNode{cp, worker}, dns)
	checkNoDiskEviction(t, client, cp, worker)
	checkOnHost(t, cp, worker)
	checkEgress(t, cp, worker, offBridge)

	for _, service := range []string{"containerd", "kubelet"} {
		pid := servicePID(t, cp.dir, service)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			p := findService(cp.dir, service)
			return p != 0 && p != pid, nil
		}); err != nil {
			t.Fatalf("%s was not restarted within 10 s of SIGKILL", service)
		}
		t.Logf("%s restarted %s after SIGKILL", service, time.Since(killed).Round(time.Millisecond))
	}
	waitForPods(t, client, cp.name, components)

	// A node whose init process is killed is reset by the next Start, as a crashed VM is: what
	// was left of it is killed, it boots again without running its cloud-init twice, and its
	// kubelet brings it back Ready.
	initPID, _ := Running(worker.dir)
	oldContainerd := servicePID(t, worker.dir, "containerd")
	oldContainers := containerCgroups(t, worker.dir)
	if len(oldContainers) == 0 {
		t.Fatal("no container's cgroup on the worker before its init is killed")
	}
	if err := syscall.Kill(initPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, running := Running(worker.dir)
		return !running, nil
	}); err != nil {
		t.Fatal("the node's init process outlived SIGKILL")
	}
	if _, err := Start(worker.dir, exe); err != nil {
		t.Fatal(err)
	}
	reset := time.Now()
	// Its cgroups are made anew: a kubelet that found its last boot's containers' cgroups would
	// look for each one's task before syncing any pod.
	for _, c := range oldContainers {
		if _, err := os.Stat(c); err == nil {
			t.Errorf("the cgroup %s of a container of the node's last boot is left after Start", c)
		}
	}
	// A killed process whose parent is gone may stay a zombie, with no command line.
	if args := proc.Cmdline(oldContainerd); len(args) > 0 && filepath.Base(args[0]) == "containerd" {
		t.Errorf("containerd %d of the node's killed init still runs after Start", oldContainerd)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		p := findService(worker.dir, "containerd")
		return p != 0 && p != oldContainerd, nil
	}); err != nil {
		t.Fatal("the reset node's containerd did not start within 10 s")
	}
	// The new kubelet renews the node's lease (every 10 s), and the node stays Ready.
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		lease, err := client.CoordinationV1().Leases("kube-node-lease").Get(ctx, worker.name, metav1.GetOptions{})
		return err == nil && findService(worker.dir, "kubelet") != 0 && lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(reset), nil
	}); err != nil {
		t.Fatal("the reset node's kubelet did not renew its lease within 30 s")
	}
	waitForNetwork(t, client, cp, worker)
	t.Logf("the node whose init was killed renewed its lease %s after", time.Since(killed).Round(time.Millisecond))
	if out, err := os.ReadFile(LogPath(worker.dir, "cloud-init-output.log")); err != nil || strings.Count(string(out), "kubeadm join") != 1 {
		t.Errorf("cloud-init ran kubeadm join %d times, want once (%v)", strings.Count(string(out), "kubeadm join"), err)
	}

	for _, n := range []testNode{worker, cp} {
		if err := Delete(n.dir); err != nil {
			t.Fatal(err)
		}
		checkGone(t, n.dir)
	}
}

// serveOffBridge serves, until the test ends, a line naming itself on an address of this host
// that is neither loopback nor on the bridge (TEST-NET-3's 203.0.113.7, given to the host's
// loopback interface for the test), as a vCenter elsewhere would be.
func serveOffBridge(t *testing.T) netip.AddrPort {
	t.Helper()
	addr := "203.0.113.7"
	if out, err := exec.Command("ip", "addr", "add", addr+"/32", "dev", "lo").CombinedOutput(); err != nil && !strings.Contains(string(out), "File exists") {
		t.Fatalf("ip addr add %s: %v: %s", addr, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "addr", "del", addr+"/32", "dev", "lo").Run() })
	l, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(conn, "off the bridge")
			conn.Close()
		}
	}()
	return netip.MustParseAddrPort(l.Addr().String())
}

// egressName is the name of the test's egress destination.
const egressName = "vcenter.egress.test"

// checkEgress checks that the node with an egress destination reaches it through the host and
// answers its name through its resolver, and that the one without, and the same host on another
// port, are refused at once.
func checkEgress(t *testing.T, cp, worker testNode, dest netip.AddrPort) {
	t.Helper()
	expectInNode(t, worker, "read "+dest.String(), "off the bridge", "the egress destination "+dest.String())
	resolver := netip.AddrPortFrom(worker.address, 53).String()
	expectInNode(t, worker, "resolve "+egressName+" "+resolver, dest.Addr().String(), "the egress destination's name")
	if out, err := inNode(worker, "resolve other.egress.test "+resolver); err == nil {
		t.Errorf("the node's resolver answered a name that is not its egress's: %q", out)
	}
	for n, d := range map[testNode]netip.AddrPort{cp: dest, worker: netip.AddrPortFrom(dest.Addr(), dest.Port()+1)} {
		out, err := inNode(n, "dial "+d.String())
		if err != nil || !strings.Contains(out, "connection refused") {
			t.Errorf("a dial of %s off the bridge from %s, not its egress: %q %v, want it refused", d, n.name, out, err)
		}
	}
}

// containerCgroups returns the cgroups of the containers the node at dir runs, in one hierarchy:
// the kubelet's kubepods/.../pod<uid>/<container id> directories.
func containerCgroups(t *testing.T, dir string) []string {
	t.Helper()
	mounts, err := hierarchies()
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	root := filepath.Join(mounts[0], cgroupParent, namespaceName(dir))
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && len(d.Name()) == 64 && strings.HasPrefix(filepath.Base(filepath.Dir(path)), "pod") {
			found = append(found, path)
		}
		return nil
	})
	return found
}

// checkNoDiskEviction checks that each node's kubelet runs without disk eviction thresholds or
// image garbage collection and pulls images in parallel, as its configz reports them, and is not
// under DiskPressure however full the host's disk is.
func checkNoDiskEviction(t *testing.T, client kubernetes.Interface, nodes ...testNode) {
	t.Helper()
	for _, n := range nodes {
		raw, err := client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", n.name, "proxy", "configz").DoRaw(t.Context())
		if err != nil {
			t.Fatalf("configz of %s: %v", n.name, err)
		}
		var configz struct {
			KubeletConfig struct {
				EvictionHard                map[string]string `json:"evictionHard"`
				ImageGCHighThresholdPercent int               `json:"imageGCHighThresholdPercent"`
				SerializeImagePulls         *bool             `json:"serializeImagePulls"`
				CgroupDriver                string            `json:"cgroupDriver"`
				CgroupRoot                  string            `json:"cgroupRoot"`
			} `json:"kubeletconfig"`
		}
		if err := json.Unmarshal(raw, &configz); err != nil {
			t.Fatalf("configz of %s: %v", n.name, err)
		}
		c := configz.KubeletConfig
		if c.CgroupDriver != "cgroupfs" || c.CgroupRoot != CgroupRoot(n.dir) || c.EvictionHard["memory.available"] != "100Mi" {
			t.Errorf("kubelet of %s: cgroupDriver %q, cgroupRoot %q, memory.available<%q; want cgroupfs, %s, 100Mi (the host's drop-in)",
				n.name, c.CgroupDriver, c.CgroupRoot, c.EvictionHard["memory.available"], CgroupRoot(n.dir))
		}
		for _, signal := range []string{"nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree"} {
			if c.EvictionHard[signal] != "0%" {
				t.Errorf("kubelet of %s evicts at %s<%q, want 0%%", n.name, signal, c.EvictionHard[signal])
			}
		}
		if c.ImageGCHighThresholdPercent != 100 {
			t.Errorf("kubelet of %s collects images above %d%% of the disk, want 100", n.name, c.ImageGCHighThresholdPercent)
		}
		if c.SerializeImagePulls == nil || *c.SerializeImagePulls {
			t.Errorf("kubelet of %s pulls one image at a time, want them in parallel (serializeImagePulls: false)", n.name)
		}
		node, err := client.CoreV1().Nodes().Get(t.Context(), n.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeDiskPressure && c.Status != corev1.ConditionFalse {
				t.Errorf("node %s is under DiskPressure: %s", n.name, c.Message)
			}
		}
	}
}

// waitForNetwork waits until both nodes are Ready (the pod network wrote their CNI
// configuration) and CoreDNS's pods are, and returns where CoreDNS's pods run.
func waitForNetwork(t *testing.T, client kubernetes.Interface, nodes ...testNode) map[string]string {
	t.Helper()
	var last string
	var dns map[string]string
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		dns = map[string]string{}
		for _, n := range nodes {
			node, err := client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			if !nodeReady(node) {
				last = fmt.Sprintf("node %s is not ready", n.name)
				return false, nil
			}
		}
		pods, err := client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-dns"})
		if err != nil || len(pods.Items) == 0 {
			last = fmt.Sprintf("no CoreDNS pods: %v", err)
			return false, nil
		}
		for _, p := range pods.Items {
			if !ready(&p) {
				last = fmt.Sprintf("pod %s is %s, not ready", p.Name, p.Status.Phase)
				return false, nil
			}
			dns[p.Status.PodIP] = p.Spec.NodeName
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the cluster's network did not come up: %s", last)
	}
	return dns
}

// refusedAtOnce is the dial client's answer for a connection refused within a second.
var refusedAtOnce = regexp.MustCompile(`connection refused after (0s|\d+ms)$`)

// checkNetwork resolves the API server's Service name from every node through CoreDNS's
// Service address (kube-proxy) and through each CoreDNS pod from a node it does not run on
// (the routes between nodes), and reaches the API server through its Service address.
func checkNetwork(t *testing.T, nodes []testNode, dns map[string]string) {
	t.Helper()
	const name = "kubernetes.default.svc.cluster.local"
	for _, n := range nodes {
		expectInNode(t, n, "resolve "+name+" 100.64.0.10:53", "100.64.0.1", name+" through CoreDNS's Service")
		expectInNode(t, n, "get https://100.64.0.1/healthz", "200 OK", "the API server through its Service")
		for ip, on := range dns {
			if on == n.name {
				continue
			}
			expectInNode(t, n, "resolve "+name+" "+net.JoinHostPort(ip, "53"), "100.64.0.1", name+" through the CoreDNS pod "+ip+" on "+on)
		}
		// Nothing leaves the host: an address off it (TEST-NET-3) and a Service address that
		// kube-proxy has not programmed are refused at once, not left to time out.
		for _, addr := range []string{"203.0.113.1:443", "100.64.255.254:443"} {
			out, err := inNode(n, "dial "+addr)
			if err != nil || !refusedAtOnce.MatchString(out) {
				t.Errorf("from %s, a connection to %s: %q, %v; want it refused at once", n.name, addr, out, err)
			}
		}
	}
}

// expectInNode makes request from the node's network namespace until it answers want, for up to
// 30 s: a node is Ready before its kube-proxy has written the Services' rules (seen once: a
// Service's address timed out 4 s after the worker was Ready).
func expectInNode(t *testing.T, n testNode, request, want, what string) {
	t.Helper()
	var out string
	var err error
	if wait.PollUntilContextTimeout(t.Context(), time.Second, 30*time.Second, true, func(context.Context) (bool, error) {
		out, err = inNode(n, request)
		return err == nil && out == want, nil
	}) != nil {
		t.Errorf("from %s, %s: %q, %v", n.name, what, out, err)
	}
}

// serveImages serves a registry on the host's bridge address with the images a control-plane
// node pulls, and returns its URL.
func serveImages(t *testing.T, layoutDir string) string {
	t.Helper()
	h, err := registry.NewHandler(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The same registry answers the node on the bridge and the test on loopback, where pushes
	// go over plain HTTP.
	l, err := net.Listen("tcp", net.JoinHostPort(hostnet.HostAddress.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	push, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.Serve(l) }()
	go func() { _ = server.Serve(push) }()
	t.Cleanup(func() { _ = server.Close() })
	built, err := images.ReadLayout(layoutDir)
	if err != nil {
		t.Fatalf("%v (make image-layout builds the images)", err)
	}
	pushed := 0
	for _, b := range built {
		for _, want := range []string{"/kube-apiserver:", "/kube-controller-manager:", "/kube-scheduler:", "/etcd:", "/pause:", "/kube-proxy:", "/coredns:", "/local-pod-network:"} {
			if strings.Contains(b.Ref, want) {
				if _, _, err := images.Push(t.Context(), push.Addr().String(), b); err != nil {
					t.Fatal(err)
				}
				pushed++
			}
		}
	}
	if pushed < 8 {
		t.Fatalf("the layout has %d of the control plane's images: run make image-layout", pushed)
	}
	return "http://" + l.Addr().String()
}

// buildSlipway builds slipway's binary, whose `local node boot` the node runs.
func buildSlipway(t *testing.T, root string) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "slipway")
	cmd := exec.Command("go", "build", "-o", exe, "./cmd/slipway")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

func adminClient(t *testing.T, dir string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, rootDir, "etc/kubernetes/admin.conf"))
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// waitForPods waits until the node's static pods of components are Running and Ready.
func waitForPods(t *testing.T, client kubernetes.Interface, node string, components []string) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, c := range components {
			pod, err := client.CoreV1().Pods("kube-system").Get(ctx, c+"-"+node, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			if !ready(pod) {
				last = fmt.Sprintf("pod %s is %s, not ready", pod.Name, pod.Status.Phase)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the control plane's pods did not run: %s", last)
	}
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// findService returns the pid of the node's containerd or kubelet, found in the node's cgroup.
func findService(dir, service string) int {
	pids, _ := Processes(dir)
	for _, pid := range pids {
		args := proc.Cmdline(pid)
		if len(args) > 0 && filepath.Base(args[0]) == service {
			return pid
		}
	}
	return 0
}

func servicePID(t *testing.T, dir, service string) int {
	t.Helper()
	pid := findService(dir, service)
	if pid == 0 {
		t.Fatalf("no %s runs in the node", service)
	}
	return pid
}

// checkOnHost checks that OnHost lists what each running node holds: its network namespace with
// its address, its veth, and its cgroup with its containerd and kubelet in it.
func checkOnHost(t *testing.T, nodes ...testNode) {
	t.Helper()
	held := OnHost()
	for _, n := range nodes {
		ns := namespaceName(n.dir)
		if got := held["network namespace "+ns]; !strings.Contains(got, n.address.String()) {
			t.Errorf("OnHost: network namespace %s holds %q, want %s", ns, got, n.address)
		}
		if _, ok := held["veth "+vethName(n.dir)]; !ok {
			t.Errorf("OnHost lists no veth %s", vethName(n.dir))
		}
		got := held["cgroup "+ns]
		pids := strings.Fields(strings.Trim(strings.TrimPrefix(got, "processes "), "[]"))
		for _, service := range []string{"containerd", "kubelet"} {
			if pid := servicePID(t, n.dir, service); !slices.Contains(pids, strconv.Itoa(pid)) {
				t.Errorf("OnHost: cgroup %s holds %q, not %s's pid %d", ns, got, service, pid)
			}
		}
	}
}

// checkGone checks that nothing of the node is left on the host.
func checkGone(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the node's directory is left: %v", err)
	}
	if _, err := os.Stat(namespacePath(namespaceName(dir))); !os.IsNotExist(err) {
		t.Errorf("the node's network namespace is left: %v", err)
	}
	if _, err := os.Stat(filepath.Join("/sys/class/net", vethName(dir))); !os.IsNotExist(err) {
		t.Errorf("the node's veth is left: %v", err)
	}
	mounts, _ := hierarchies()
	for _, m := range mounts {
		if _, err := os.Stat(filepath.Join(m, cgroupParent, namespaceName(dir))); !os.IsNotExist(err) {
			t.Errorf("the node's cgroup in %s is left", m)
		}
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(info), dir) {
		t.Errorf("a mount of the node is left on the host:\n%s", info)
	}
}

func dumpLogs(t *testing.T, dir string) {
	for _, f := range []string{"boot.log", "cloud-init-output.log", "kubelet.log", "containerd.log"} {
		data, _ := os.ReadFile(filepath.Join(dir, logsDir, f))
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		t.Logf("%s:\n%s", f, data)
	}
}

// TestBridgeKeepsItsAddress checks that the bridge's hardware address stays bridgeMAC when a
// port with a lower address comes and goes: a bridge takes its lowest port's address unless one
// was set, and a change strands every node's neighbour entry for the host.
func TestBridgeKeepsItsAddress(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the bridge needs root")
	}
	if err := EnsureBridge(); err != nil {
		t.Fatal(err)
	}
	mac := func() string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("/sys/class/net", hostnet.BridgeName, "address"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(data))
	}
	if got := mac(); got != bridgeMAC {
		t.Fatalf("the bridge's address is %s, want %s", got, bridgeMAC)
	}
	// A port whose address is below every other, as a node's veth may be; not named as a node's
	// veth, which the other packages' leak checks look for.
	port := "brtest" + fmt.Sprint(os.Getpid()%100000)
	if err := ip("link", "add", port, "address", "00:00:5e:00:53:01", "type", "veth", "peer", "name", port+"p"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ip("link", "del", port) })
	if err := ip("link", "set", port, "master", hostnet.BridgeName, "up"); err != nil {
		t.Fatal(err)
	}
	if got := mac(); got != bridgeMAC {
		t.Errorf("with a port of a lower address, the bridge's address is %s, want %s", got, bridgeMAC)
	}
	if err := ip("link", "del", port); err != nil {
		t.Fatal(err)
	}
	if got := mac(); got != bridgeMAC {
		t.Errorf("after that port is gone, the bridge's address is %s, want %s", got, bridgeMAC)
	}
}

func TestLoopbackAddress(t *testing.T) {
	for registry, want := range map[string]string{
		"127.0.0.1:5000": "127.0.0.1:5000",
		"localhost:5001": "127.0.0.1:5001",
		"127.1.2.3:443":  "127.1.2.3:443",
		"198.18.0.1:500": "",
		"localhost":      "",
		"[::1]:5000":     "[::1]:5000",
	} {
		addr, ok := loopbackAddress(registry)
		if got := addr.String(); ok != (want != "") || ok && got != want {
			t.Errorf("loopbackAddress(%q) = %s, %v; want %q", registry, got, ok, want)
		}
	}
}
