package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/images"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/vm"
)

// TestRealNodesRunAnApplication makes a cluster of real nodes (`local cluster create`'s default:
// containerd and the real kubelet in nodes of namespaces, booted by kubeadm) and
// runs an application on it as a user would: an image built here and pushed to the local
// registry, a Deployment of 2 replicas spread over 2 workers, its ClusterIP Service reached by
// name from a pod (kube-proxy and CoreDNS), a NodePort reached from the host, a claim of the
// default StorageClass bound and written, and upstream kubectl's logs, exec, port-forward, cp and
// drain. Deleting the cluster leaves nothing.
func TestRealNodesRunAnApplication(t *testing.T) {
	needRoot(t)
	ctx := t.Context()
	before := vm.OnHost()
	registryAddr := startRegistryWithNodeImages(t)
	pushImages(t, registryAddr, "/addons-controller:")
	image := pushApplicationImage(t, registryAddr)
	// The cluster's CAs are supplied, as a Cluster API cluster's secrets supply them.
	cas, pkiDir := suppliedCAs(t)

	start := time.Now()
	out, err := runSlipway(t, "local", "cluster", "create", "apps", "--worker-nodes", "2", "--pki-dir", pkiDir)
	t.Cleanup(func() {
		store := cluster.Store{Root: filepath.Join(home, "local")}
		dirs, _ := store.Dirs("apps")
		if _, err := os.Stat(dirs.Root); err == nil {
			if t.Failed() {
				dumpRealNodeLogs(t, dirs)
			}
			_, _ = runSlipwayContext(context.Background(), "local", "cluster", "delete", "apps")
		}
	})
	if err != nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
	t.Logf("created a cluster of 3 real nodes in %s:\n%s", time.Since(start).Round(100*time.Millisecond), out)
	for _, line := range []string{"Ensuring node image (slipway real node", "Preparing nodes", "Starting control-plane",
		"Installing CNI", "Installing StorageClass", "Joining worker nodes", "Ready after", `Set kubectl context to "slipway-apps"`} {
		if !strings.Contains(out, line) {
			t.Errorf("create output lacks %q", line)
		}
	}
	kubeconfig := localKubeconfig(t, "apps")
	kubectl := kubectlOn(t, kubeconfig)
	mustKubectl := func(args ...string) string {
		t.Helper()
		out, err := kubectl(args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	// Each node is Ready and its kubelet reports TKG's version of Kubernetes, as a TKG node does.
	if out := mustKubectl("get", "nodes", "-o", "wide"); strings.Count(out, " Ready ") != 3 || strings.Count(out, " v1.35.4+vmware.1 ") != 3 {
		t.Fatalf("not 3 Ready nodes of kubelet v1.35.4+vmware.1:\n%s", out)
	} else {
		t.Logf("kubectl get nodes:\n%s", out)
	}
	if out := mustKubectl("get", "pods", "-n", "kube-system", "-o", "wide"); !strings.Contains(out, "kube-proxy") || !strings.Contains(out, "coredns") {
		t.Errorf("kubeadm's add-ons are not there:\n%s", out)
	}

	lc := clusterClients(t, kubeconfig)
	checkLocalClusterBasics(t, lc, "apps", cas)

	workers := []string{"apps-worker", "apps-worker2"}
	deploy := applicationDeployment(image)
	if _, err := lc.cs.AppsV1().Deployments("default").Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "hello"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if svc, err = lc.cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := waitForApplication(t, lc, 2, 3*time.Minute)
	t.Logf("the application's 2 pods ran %s after the cluster was created", time.Since(start).Round(time.Second))
	byNode := map[string]string{}
	for _, p := range pods {
		byNode[p.Spec.NodeName] = p.Name
	}
	if len(byNode) != 2 {
		t.Fatalf("the 2 replicas are not on 2 workers: %v", byNode)
	}

	// The Service by name from a pod, through CoreDNS and kube-proxy: both replicas answer,
	// one of them on the other node.
	client := pods[0]
	seen := map[string]bool{}
	eventually(t, time.Minute, "both replicas answering through the Service's name", func() error {
		out, err := kubectl("exec", client.Name, "--", "/httpserver", "get", "http://hello.default.svc.cluster.local/")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		for pod := range strings.FieldsSeq(out) {
			seen[strings.TrimPrefix(pod, "pod=")] = true
		}
		if !seen[pods[0].Name] || !seen[pods[1].Name] {
			return fmt.Errorf("seen %v", seen)
		}
		return nil
	})

	// The NodePort from the host, on each worker's address.
	nodes, err := lc.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if !strings.Contains(n.Name, "worker") {
			continue
		}
		url := fmt.Sprintf("http://%s/", net.JoinHostPort(internalIP(&n), fmt.Sprint(svc.Spec.Ports[0].NodePort)))
		eventually(t, time.Minute, "the NodePort from the host at "+url, func() error {
			body, err := httpGet(ctx, url)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(body, "pod=hello-") {
				return fmt.Errorf("answer %q", body)
			}
			return nil
		})
	}

	// kubectl logs shows the requests the pod served.
	eventually(t, 30*time.Second, "kubectl logs", func() error {
		out, err := kubectl("logs", "-l", "app=hello", "--all-containers", "--prefix", "--tail=-1")
		if err != nil || !strings.Contains(out, "GET / from") || !strings.Contains(out, "serving on :8080") {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})

	// kubectl port-forward to a pod, from the host.
	portForwardKubectl(t, kubeconfig, pods[1].Name)

	// kubectl cp into a pod, then read it back with exec.
	local := filepath.Join(t.TempDir(), "greeting.txt")
	if err := os.WriteFile(local, []byte("copied by kubectl cp\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustKubectl("cp", local, pods[1].Name+":/tmp/greeting.txt")
	if out := mustKubectl("exec", pods[1].Name, "--", "cat", "/tmp/greeting.txt"); out != "copied by kubectl cp\n" {
		t.Errorf("the copied file reads %q", out)
	}

	// A claim of the default StorageClass, bound when its pod is scheduled, written by the pod and
	// found on its node's disk.
	writeVolume(t, lc, image, kubectl)

	// Upstream's kapp-controller runs here, its aggregated API and a package's install.
	t.Run("upstream kapp-controller", func(t *testing.T) { runUpstreamKappController(t, registryAddr, kubectl) })
	// So does upstream's cert-manager: its webhook, its CA injector and issuance.
	t.Run("upstream cert-manager", func(t *testing.T) { runUpstreamCertManager(t, registryAddr, kubectl) })

	// Drain evicts the worker's pod; the Deployment brings it back on the other worker.
	drained := workers[0]
	out = mustKubectl("drain", drained, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=2m")
	t.Logf("kubectl drain %s:\n%s", drained, out)
	if !strings.Contains(out, "evicting pod default/"+byNode[drained]) {
		t.Errorf("drain did not evict %s", byNode[drained])
	}
	after := waitForApplication(t, lc, 2, 2*time.Minute)
	for _, p := range after {
		if p.Spec.NodeName == drained {
			t.Errorf("pod %s runs on the drained node", p.Name)
		}
	}

	if out, err := runSlipway(t, "local", "cluster", "delete", "apps"); err != nil {
		t.Fatalf("delete: %v\n%s", err, out)
	}
	checkNoRealNodeLeft(t, before)
}

// startRegistryWithNodeImages starts the local registry of the test's slipway home and pushes
// what a real node pulls (`make images` does this for a user).
func startRegistryWithNodeImages(t *testing.T) string {
	t.Helper()
	addr := startRegistry(t)
	pushNodeImages(t, addr)
	return addr
}

// needRoot fails a test of real nodes not run as root.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("real nodes are made of namespaces and cgroups: the e2e suite runs as root (.ci/run does)")
	}
}

// pushNodeImages pushes the images a real node pulls to the local registry at addr: those of
// each Kubernetes version named, or of the default one when none is.
func pushNodeImages(t *testing.T, addr string, versions ...string) {
	t.Helper()
	if len(versions) == 0 {
		versions = []string{assets.DefaultKubernetesVersion()}
	}
	// kube-vip's stand-in runs where TKG's vSphere ClusterClass writes its static pod: on the
	// control-plane VMs of the simulator.
	want := []string{"/local-pod-network:", assets.LocalPathProvisionerImage, "/kube-vip:"}
	for _, v := range versions {
		release, err := assets.ReleaseOf(v)
		if err != nil {
			t.Fatal(err)
		}
		tag := ":" + release.Version + "_vmware.1"
		want = append(want, "/kube-apiserver"+tag, "/kube-controller-manager"+tag, "/kube-scheduler"+tag, "/kube-proxy"+tag,
			"/etcd:"+release.EtcdTag, "/pause:"+release.PauseTag, "/coredns:"+release.CoreDNSTag)
	}
	pushImages(t, addr, want...)
}

// pushImages pushes to the local registry at addr the images of the layout `make image-layout`
// builds whose references match one of want: a wanted reference ends the image's, or, ending in
// ":", names it at any tag. Each wanted reference must match one.
func pushImages(t *testing.T, addr string, want ...string) {
	t.Helper()
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	built, err := images.ReadLayout(filepath.Join(root, "bin", images.LayoutDir))
	if err != nil {
		t.Fatalf("%v (make image-layout builds the images)", err)
	}
	want = slices.Clone(want)
	slices.Sort(want)
	want = slices.Compact(want)
	matches := func(ref, w string) bool {
		return strings.HasSuffix(ref, w) || strings.HasSuffix(w, ":") && strings.Contains(ref, w)
	}
	missing := map[string]bool{}
	for _, w := range want {
		missing[w] = true
	}
	for _, b := range built {
		i := slices.IndexFunc(want, func(w string) bool { return matches(b.Ref, w) })
		if i < 0 {
			continue
		}
		if _, _, err := images.Push(t.Context(), addr, b); err != nil {
			t.Fatal(err)
		}
		delete(missing, want[i])
	}
	if len(missing) > 0 {
		t.Fatalf("no image of the layout is %v, which a node pulls: run make image-layout", slices.Sorted(maps.Keys(missing)))
	}
}

// pushApplicationImage builds the test's HTTP server (also its client) into an image with
// Debian's busybox (sh, tar and cat, which kubectl exec and cp use) and pushes it to the local registry, as a
// user pushes an application to kind's local registry. It returns the image's name.
func pushApplicationImage(t *testing.T, registryAddr string) string {
	t.Helper()
	busybox, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Fatalf("Debian's busybox-static is not installed (apt-get install busybox-static; .ci/run installs it): %v", err)
	}
	bin := filepath.Join(t.TempDir(), "httpserver")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./testdata/httpserver")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build httpserver: %v\n%s", err, out)
	}
	server, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files := map[string][]byte{"bin/busybox": busybox, "httpserver": server}
	for _, dir := range []string{"bin/", "tmp/", "data/"} {
		if err := tw.WriteHeader(&tar.Header{Name: dir, Typeflag: tar.TypeDir, Mode: 0o1777}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"bin/busybox", "httpserver"} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(files[name]); err != nil {
			t.Fatal(err)
		}
	}
	for _, applet := range []string{"sh", "tar", "cat", "ls", "sleep"} {
		if err := tw.WriteHeader(&tar.Header{Name: "bin/" + applet, Linkname: "/bin/busybox", Typeflag: tar.TypeSymlink, Mode: 0o777}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	img := oneLayerImage(t, buf.Bytes(), v1.Config{Entrypoint: []string{"/httpserver"}, Env: []string{"PATH=/bin"}})
	ref := registryAddr + "/e2e/httpserver:v1"
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img, remote.WithContext(t.Context())); err != nil {
		t.Fatal(err)
	}
	return ref
}

// writeVolume claims a volume of the default StorageClass for a pod of the application's image,
// writes a file into it from the pod, reads it back, and finds it in the directory the
// provisioner made on the pod's node.
func writeVolume(t *testing.T, lc *localCluster, image string, kubectl func(...string) (string, error)) {
	t.Helper()
	ctx := t.Context()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}},
	}
	if _, err := lc.cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "writer", Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](2),
			Containers: []corev1.Container{{Name: "writer", Image: image,
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
		},
	}
	if _, err := lc.cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the claim bound and its pod running", func() error {
		c, err := lc.cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod, err = lc.cs.CoreV1().Pods("default").Get(ctx, "writer", metav1.GetOptions{}); err != nil {
			return err
		}
		if c.Status.Phase != corev1.ClaimBound || !podReady(pod) {
			return fmt.Errorf("claim %s, pod %s", c.Status.Phase, pod.Status.Phase)
		}
		return nil
	})
	if out, err := kubectl("exec", "writer", "--", "sh", "-c", "echo written in a volume > /data/data"); err != nil {
		t.Fatalf("write: %v\n%s", err, out)
	}
	if out, err := kubectl("exec", "writer", "--", "cat", "/data/data"); err != nil || out != "written in a volume\n" {
		t.Fatalf("read back %q: %v", out, err)
	}
	claim, err := lc.cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pv, err := lc.cs.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.HostPath == nil || !strings.HasPrefix(pv.Spec.HostPath.Path, vm.LocalPathDir+"/") {
		t.Fatalf("volume %s is not a directory under %s: %+v", pv.Name, vm.LocalPathDir, pv.Spec.PersistentVolumeSource)
	}
	dirs, err := cluster.Store{Root: filepath.Join(home, "local")}.Dirs("apps")
	if err != nil {
		t.Fatal(err)
	}
	onDisk := vm.RootPath(dirs.Node(pod.Spec.NodeName), filepath.Join(pv.Spec.HostPath.Path, "data"))
	if data, err := os.ReadFile(onDisk); err != nil || string(data) != "written in a volume\n" {
		t.Errorf("the node's disk has %q at %s: %v", data, onDisk, err)
	}
	t.Logf("claim %s bound to %s on node %s", claim.Name, pv.Spec.HostPath.Path, pod.Spec.NodeName)

	// Deleting the claim deletes the volume and its directory (reclaim policy Delete).
	if err := lc.cs.CoreV1().Pods("default").Delete(ctx, "writer", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := lc.cs.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the volume and its directory deleted", func() error {
		if _, err := lc.cs.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{}); err == nil {
			return fmt.Errorf("volume %s is still there", pv.Name)
		}
		if _, err := os.Stat(filepath.Dir(onDisk)); err == nil {
			return fmt.Errorf("%s is still there", filepath.Dir(onDisk))
		}
		return nil
	})
}

// applicationDeployment is 2 replicas of the HTTP server, one on each worker.
func applicationDeployment(image string) *appsv1.Deployment {
	labels := map[string]string{"app": "hello"}
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](2),
					// One replica a worker; after a drain both may share the other.
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100,
							PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname,
								LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}}},
					}},
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
						WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}},
					Containers: []corev1.Container{{
						Name:  "hello",
						Image: image,
						Env:   []corev1.EnvVar{fieldEnv("POD_NAME", "metadata.name"), fieldEnv("NODE_NAME", "spec.nodeName")},
						Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
							HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 2},
					}},
				},
			},
		},
	}
}

// waitForApplication waits until want pods of the Deployment are Ready, and no other is left.
func waitForApplication(t *testing.T, lc *localCluster, want int, timeout time.Duration) []corev1.Pod {
	t.Helper()
	var ready []corev1.Pod
	eventually(t, timeout, fmt.Sprintf("%d ready pods of the application", want), func() error {
		list, err := lc.cs.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{LabelSelector: "app=hello"})
		if err != nil {
			return err
		}
		ready = nil
		var states []string
		for _, p := range list.Items {
			if podReady(&p) && p.DeletionTimestamp == nil {
				ready = append(ready, p)
			}
			states = append(states, fmt.Sprintf("%s on %s: %s", p.Name, p.Spec.NodeName, p.Status.Phase))
		}
		if len(ready) != want || len(list.Items) != want {
			return fmt.Errorf("pods: %s", strings.Join(states, "; "))
		}
		return nil
	})
	return ready
}

// clusterClients are the test's clients of a cluster, from its kubeconfig file.
func clusterClients(t *testing.T, kubeconfig string) *localCluster {
	t.Helper()
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return clientsFor(t, data)
}

func internalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

func httpGet(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, body)
	}
	return string(body), err
}

// portForwardKubectl runs `kubectl port-forward` to the pod's port 8080 and reads the pod's
// answer through it on the host.
func portForwardKubectl(t *testing.T, kubeconfig, pod string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	cmd := exec.CommandContext(ctx, kubectlBin, "--kubeconfig", kubeconfig, "port-forward", "pod/"+pod, ":8080")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Stop kubectl, then reap it.
	defer func() {
		cancel()
		_ = cmd.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	forwarding := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 8080`)
	var port string
	for lines.Scan() {
		if m := forwarding.FindStringSubmatch(lines.Text()); m != nil {
			port = m[1]
			break
		}
	}
	if port == "" {
		t.Fatal("kubectl port-forward did not say where it listens")
	}
	go func() {
		for lines.Scan() {
		}
	}()
	body, err := httpGet(ctx, "http://127.0.0.1:"+port+"/")
	if err != nil || !strings.Contains(body, "pod="+pod) {
		t.Fatalf("through kubectl port-forward: %q, %v", body, err)
	}
}

// checkNoRealNodeLeft checks that no node of namespaces made since before was taken is left on
// the host: network namespace, veth, cgroup or process. What was there before is logged, not
// counted: the test that left it fails on it.
func checkNoRealNodeLeft(t *testing.T, before map[string]string) {
	t.Helper()
	now := vm.OnHost()
	left := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(now)) {
		if _, ok := before[k]; ok {
			t.Logf("%s (%s) was there before this test", k, now[k])
			continue
		}
		left[k] = now[k]
	}
	// make test runs other packages beside this one, and internal/local/vm's tests make nodes of
	// their own on this host (198.19.254.0/24) for seconds each: what is new here is left only if
	// it is still there two minutes on.
	for deadline := time.Now().Add(2 * time.Minute); len(left) > 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Second)
		now := vm.OnHost()
		for k := range left {
			if _, ok := now[k]; !ok {
				delete(left, k)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(left)) {
		t.Errorf("%s is left: %s", k, left[k])
	}
}

// dumpRealNodeLogs logs the end of each node's boot, cloud-init and kubelet logs, and of the
// cluster's load balancer's log, which says when each API server was found ready.
func dumpRealNodeLogs(t *testing.T, dirs cluster.Dirs) {
	if data, err := os.ReadFile(dirs.LoadBalancerLog()); err == nil {
		t.Logf("load balancer %s:\n%s", dirs.LoadBalancerLog(), tail(data, 3000))
	}
	nodes, _ := os.ReadDir(filepath.Join(dirs.Root, "nodes"))
	for _, n := range nodes {
		for _, f := range []string{"boot.log", "cloud-init-output.log", "kubelet.log"} {
			data, _ := os.ReadFile(filepath.Join(dirs.Root, "nodes", n.Name(), "logs", f))
			t.Logf("%s %s:\n%s", n.Name(), f, tail(data, 3000))
		}
	}
}

// oneLayerImage is an image of one layer, the tar archive data, with the config cfg.
func oneLayerImage(t *testing.T, data []byte, cfg v1.Config) v1.Image {
	t.Helper()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	if img, err = mutate.Config(img, cfg); err != nil {
		t.Fatal(err)
	}
	return img
}

// checkContainerdNodes checks that a cluster has n nodes, each the real kubelet's on containerd.
func checkContainerdNodes(t *testing.T, c client.Client, n int) {
	t.Helper()
	nodes := &corev1.NodeList{}
	if err := c.List(t.Context(), nodes); err != nil || len(nodes.Items) != n {
		t.Fatalf("%d nodes (%v), want %d", len(nodes.Items), err, n)
	}
	for _, node := range nodes.Items {
		if !strings.HasPrefix(node.Status.NodeInfo.ContainerRuntimeVersion, "containerd://") {
			t.Errorf("node %s runs %s, want containerd", node.Name, node.Status.NodeInfo.ContainerRuntimeVersion)
		}
	}
}

// tail is the last n bytes of data.
func tail(data []byte, n int) []byte {
	if len(data) > n {
		return data[len(data)-n:]
	}
	return data
}
