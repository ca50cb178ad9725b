package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	cniv1alpha1 "github.com/slipway-dev/slipway/api/cni/v1alpha1"
	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/local/node"
	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/pki"
)

// TestLocalCluster creates a cluster of one control-plane and one worker node and checks what a
// kind user would: nodes, kube-system, a Deployment placed by the scheduler, a component running
// as a process with its logs, a component's webhook, and a clean delete.
func TestLocalCluster(t *testing.T) {
	// The cluster's CAs are supplied, as a Cluster API cluster's secrets supply them.
	cas, err := pki.GenerateCAs()
	if err != nil {
		t.Fatal(err)
	}
	pkiDir := t.TempDir()
	if err := cas.Write(pkiDir); err != nil {
		t.Fatal(err)
	}
	lc := createCluster(t, "e2e", "--node-runtime", "agent", "--worker-nodes", "1", "--pki-dir", pkiDir)
	ctx := t.Context()

	t.Run("a kubeconfig signed by the supplied CA works", func(t *testing.T) {
		cfg, err := pki.Kubeconfig(cas, "e2e", lc.config.Host, "capi-admin", []string{"system:masters"})
		if err != nil {
			t.Fatal(err)
		}
		restCfg, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		cs, err := kubernetes.NewForConfig(restCfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatalf("the supplied CA's client certificate is refused: %v", err)
		}
	})

	t.Run("kubeadm's and kind's objects exist", func(t *testing.T) {
		for _, key := range []client.ObjectKey{
			{Namespace: "kube-system", Name: "kubeadm-config"},
			{Namespace: "kube-system", Name: "kubelet-config"},
			{Namespace: "kube-public", Name: "cluster-info"},
			{Namespace: "kube-system", Name: "coredns"},
		} {
			if err := lc.client.Get(ctx, key, &corev1.ConfigMap{}); err != nil {
				t.Errorf("ConfigMap %s: %v", key, err)
			}
		}
		sc := &storagev1.StorageClass{}
		if err := lc.client.Get(ctx, client.ObjectKey{Name: "standard"}, sc); err != nil || sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" {
			t.Errorf("default StorageClass: %v %v", err, sc.Annotations)
		}
	})

	t.Run("port-forward through the API server reaches etcd", func(t *testing.T) {
		status := portForwardGet(t, lc, "kube-system", "etcd-e2e-control-plane", 2379, "/health")
		if !strings.Contains(status, `"health":"true"`) {
			t.Fatalf("etcd /health through port-forward: %s", status)
		}
	})

	t.Run("nodes are Ready with providerIDs and addresses", func(t *testing.T) {
		nodes := &corev1.NodeList{}
		if err := lc.client.List(ctx, nodes); err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 2 {
			t.Fatalf("want 2 nodes, got %d", len(nodes.Items))
		}
		for _, n := range nodes.Items {
			if !strings.HasPrefix(n.Spec.ProviderID, node.ProviderIDPrefix+"e2e/") {
				t.Errorf("node %s has providerID %q", n.Name, n.Spec.ProviderID)
			}
			if len(n.Status.Addresses) == 0 || !strings.HasPrefix(n.Status.Addresses[0].Address, "172.18.") {
				t.Errorf("node %s has addresses %v", n.Name, n.Status.Addresses)
			}
			if n.Status.NodeInfo.KubeletVersion != assets.DefaultKubernetesVersion() {
				t.Errorf("node %s runs %s", n.Name, n.Status.NodeInfo.KubeletVersion)
			}
		}
	})

	t.Run("kube-system pods are Running and Ready", func(t *testing.T) {
		eventually(t, time.Minute, "kube-system pods", func() error {
			pods := &corev1.PodList{}
			if err := lc.client.List(ctx, pods, client.InNamespace("kube-system")); err != nil {
				return err
			}
			want := []string{"etcd-e2e-control-plane", "kube-apiserver-e2e-control-plane", "kube-controller-manager-e2e-control-plane",
				"kube-scheduler-e2e-control-plane", "coredns-", "kube-proxy-", "kindnet-"}
			for _, prefix := range want {
				if !hasReadyPod(pods, prefix) {
					return fmt.Errorf("no Running and Ready pod %s*", prefix)
				}
			}
			return nil
		})
	})

	t.Run("a Deployment of a simulated image becomes Available, placed by the scheduler", func(t *testing.T) {
		deploy := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](3),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
				},
			},
		}
		if err := lc.client.Create(ctx, deploy); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "Deployment web Available", func() error {
			if err := lc.client.Get(ctx, client.ObjectKeyFromObject(deploy), deploy); err != nil {
				return err
			}
			if deploy.Status.AvailableReplicas != 3 {
				return fmt.Errorf("%d of 3 replicas available", deploy.Status.AvailableReplicas)
			}
			return nil
		})
		pods := &corev1.PodList{}
		if err := lc.client.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels{"app": "web"}); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			// The control-plane node is tainted when the cluster has workers.
			if p.Spec.NodeName != "e2e-worker" {
				t.Errorf("pod %s placed on %q, want the worker", p.Name, p.Spec.NodeName)
			}
			if p.Annotations[node.AnnotationSimulated] != "true" {
				t.Errorf("pod %s is not annotated simulated", p.Name)
			}
		}
		events, err := lc.cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "reason=Scheduled"})
		if err != nil {
			t.Fatal(err)
		}
		scheduled := 0
		for _, e := range events.Items {
			if e.ReportingController == "default-scheduler" || e.Source.Component == "default-scheduler" {
				scheduled++
			}
		}
		if scheduled < 3 {
			t.Errorf("the scheduler reported %d Scheduled events, want at least 3", scheduled)
		}
	})

	t.Run("a component runs as a process, its logs are readable and its webhook rejects a bad object", func(t *testing.T) {
		deployAddonsManager(t, lc)
		pod := waitForReadyPod(t, lc, "tkg-system", "app=tanzu-addons-manager")
		if pod.Annotations[node.AnnotationSimulated] == "true" {
			t.Fatalf("component pod %s is simulated", pod.Name)
		}
		if pids := proc.Mentioning("tanzu-addons-manager"); len(pids) == 0 {
			t.Fatal("no process runs the tanzu-addons-manager component")
		}
		logs, err := lc.cs.CoreV1().Pods("tkg-system").GetLogs(pod.Name, &corev1.PodLogOptions{Container: "tanzu-addons-controller"}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(logs), "Starting webhook server") {
			t.Errorf("the component's log lacks its own output:\n%s", logs)
		}

		// As kubectl users do, wait until the Service routes to the pod.
		eventually(t, time.Minute, "webhook Service endpoints", func() error {
			slices, err := lc.cs.DiscoveryV1().EndpointSlices("tkg-system").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=tanzu-addons-manager-webhook-service"})
			if err != nil {
				return err
			}
			for _, s := range slices.Items {
				for _, e := range s.Endpoints {
					if ptr.Deref(e.Conditions.Ready, false) && len(e.Addresses) > 0 && e.Addresses[0] == pod.Status.PodIP {
						return nil
					}
				}
			}
			return fmt.Errorf("no ready endpoint %s", pod.Status.PodIP)
		})
		bad := &cniv1alpha1.AntreaConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "default"},
			Spec: cniv1alpha1.AntreaConfigSpec{Antrea: cniv1alpha1.Antrea{AntreaConfigDataValue: cniv1alpha1.AntreaConfigDataValue{
				TrafficEncapMode: "encap", NoSNAT: true,
			}}},
		}
		err = lc.client.Create(ctx, bad)
		if err == nil || !strings.Contains(err.Error(), "spec.antrea.config.noSNAT") || !strings.Contains(err.Error(), "denied the request") {
			t.Fatalf("the webhook did not reject noSNAT in encap mode: %v", err)
		}
		good := bad.DeepCopy()
		good.Name, good.Spec.Antrea.AntreaConfigDataValue.NoSNAT = "good", false
		if err := lc.client.Create(ctx, good); err != nil {
			t.Fatalf("the webhook rejected a good AntreaConfig: %v", err)
		}
	})

	t.Run("a crashing component restarts with back-off", func(t *testing.T) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "crasher", Namespace: "default"},
			Spec: corev1.PodSpec{
				Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				Containers: []corev1.Container{{
					Name: "manager", Image: "ghcr.io/slipway-dev/addons-controller:v0.1.0",
					// No certificate there: the webhook server cannot start.
					Args: []string{"--tls-cert-dir=/nonexistent"},
				}},
			},
		}
		if err := lc.client.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		var first time.Time
		eventually(t, time.Minute, "first crash", func() error {
			if err := lc.client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
				return err
			}
			cs := pod.Status.ContainerStatuses
			if len(cs) == 0 || cs[0].RestartCount < 1 {
				return fmt.Errorf("not restarted yet")
			}
			if cs[0].State.Waiting == nil || cs[0].State.Waiting.Reason != "CrashLoopBackOff" {
				return fmt.Errorf("state %+v", cs[0].State)
			}
			if cs[0].LastTerminationState.Terminated == nil || cs[0].LastTerminationState.Terminated.ExitCode == 0 {
				return fmt.Errorf("last state %+v", cs[0].LastTerminationState)
			}
			first = cs[0].LastTerminationState.Terminated.FinishedAt.Time
			return nil
		})
		eventually(t, time.Minute, "second start after the back-off", func() error {
			if err := lc.client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
				return err
			}
			if cs := pod.Status.ContainerStatuses; len(cs) == 0 || cs[0].RestartCount < 2 {
				return fmt.Errorf("restarted %d times", cs[0].RestartCount)
			}
			return nil
		})
		second := pod.Status.ContainerStatuses[0].LastTerminationState.Terminated
		if second.StartedAt.Time.Sub(first) < 9*time.Second {
			t.Errorf("restarted %s after the crash, want the kubelet's 10s back-off", second.StartedAt.Time.Sub(first))
		}
		logs, err := lc.cs.CoreV1().Pods("default").GetLogs("crasher", &corev1.PodLogOptions{Previous: true}).DoRaw(ctx)
		if err != nil || !strings.Contains(string(logs), "nonexistent") {
			t.Errorf("previous logs do not say why it crashed: %v\n%s", err, logs)
		}
	})

	t.Run("deleting a component pod stops its process within the grace period", func(t *testing.T) {
		pod := waitForReadyPod(t, lc, "tkg-system", "app=tanzu-addons-manager")
		if err := lc.client.Delete(ctx, pod, client.GracePeriodSeconds(5)); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, "pod removed", func() error {
			err := lc.client.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
			if err == nil {
				return fmt.Errorf("pod %s still exists", pod.Name)
			}
			return client.IgnoreNotFound(err)
		})
		if pids := proc.Mentioning(string(pod.UID)); len(pids) > 0 {
			t.Errorf("processes %v of the deleted pod survive", pids)
		}
	})

	t.Run("delete leaves no process, port or file behind", func(t *testing.T) {
		spec, err := readSpec(lc)
		if err != nil {
			t.Fatal(err)
		}
		out, err := runSlipway(t, "local", "cluster", "delete", "e2e")
		if err != nil {
			t.Fatalf("delete: %v\n%s", err, out)
		}
		assertGone(t, lc.dirs.Root, nodeAddresses(spec))
	})
}

func hasReadyPod(pods *corev1.PodList, prefix string) bool {
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, prefix) && p.Status.Phase == corev1.PodRunning && podReady(&p) {
			return true
		}
	}
	return false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func waitForReadyPod(t *testing.T, lc *localCluster, namespace, selector string) *corev1.Pod {
	t.Helper()
	var ready *corev1.Pod
	eventually(t, 2*time.Minute, "pod "+selector+" Ready", func() error {
		pods, err := lc.cs.CoreV1().Pods(namespace).List(t.Context(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		for i := range pods.Items {
			if podReady(&pods.Items[i]) {
				ready = &pods.Items[i]
				return nil
			}
		}
		return fmt.Errorf("%d pods, none Ready", len(pods.Items))
	})
	return ready
}

// deployAddonsManager installs the AntreaConfig CRD and the addons manager with a serving
// certificate for its webhook Service.
func deployAddonsManager(t *testing.T, lc *localCluster) {
	t.Helper()
	ctx := t.Context()
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	crdData, err := os.ReadFile(filepath.Join(root, "config/crd/bases/cni.tanzu.vmware.com_antreaconfigs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(crdData, crd); err != nil {
		t.Fatal(err)
	}
	if err := lc.client.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	ca, err := pki.NewCA("addons-webhook-ca")
	if err != nil {
		t.Fatal(err)
	}
	service := "tanzu-addons-manager-webhook-service"
	serving, err := ca.Issue(pki.CertSpec{CommonName: service, DNSNames: []string{service + ".tkg-system.svc", service + ".tkg-system.svc.cluster.local"}, Usages: pki.ServerUsage})
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := serving.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	objs := renderObjects(t, filepath.Join("testdata", "addons-manager.yaml"), map[string]string{"CABundle": base64.StdEncoding.EncodeToString(ca.CertPEM())})
	for _, obj := range objs {
		if err := lc.client.Create(ctx, obj); err != nil {
			t.Fatalf("failed to create %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		if obj.GetKind() == "Namespace" {
			secret := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "tanzu-addons-manager-webhook-tls", Namespace: "tkg-system"},
				Type:       corev1.SecretTypeTLS,
				Data:       map[string][]byte{"tls.crt": serving.CertPEM(), "tls.key": keyPEM},
			}
			if err := lc.client.Create(ctx, secret); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func renderObjects(t *testing.T, path string, values interface{}) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := template.Must(template.New(path).Parse(string(raw))).Execute(&buf, values); err != nil {
		t.Fatal(err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(&buf, 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := decoder.Decode(&u.Object); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}

// assertGone checks that no process mentions the cluster's directory, that its directory is
// gone and that every address it used is free again.
func assertGone(t *testing.T, dir string, addrs []string) {
	t.Helper()
	if pids := proc.Using(dir); len(pids) > 0 {
		t.Errorf("processes %v of the cluster survive delete", pids)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s survives delete: %v", dir, err)
	}
	for _, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("port %s is still in use after delete: %v", addr, err)
			continue
		}
		l.Close()
	}
}
