package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

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
	"github.com/slipway-dev/slipway/internal/pki"
)

// suppliedCAs writes new cluster CAs into a kubeadm pki directory, as a Cluster API cluster's
// secrets supply them, for `local cluster create --pki-dir`.
func suppliedCAs(t *testing.T) (*pki.CAs, string) {
	t.Helper()
	cas, err := pki.GenerateCAs()
	if err != nil {
		t.Fatal(err)
	}
	pkiDir := t.TempDir()
	if err := cas.Write(pkiDir); err != nil {
		t.Fatal(err)
	}
	return cas, pkiDir
}

// checkLocalClusterBasics checks what a kind user would of a local cluster named name, made with
// the CAs cas: a kubeconfig its CA signs, kubeadm's objects and the default StorageClass, and a
// component's webhook, reached through its Service, rejecting a bad object.
func checkLocalClusterBasics(t *testing.T, lc *localCluster, name string, cas *pki.CAs) {
	ctx := t.Context()

	t.Run("a kubeconfig signed by the supplied CA works", func(t *testing.T) {
		cfg, err := pki.Kubeconfig(cas, name, lc.config.Host, "capi-admin", []string{"system:masters"})
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

	t.Run("a component's logs are readable and its webhook rejects a bad object", func(t *testing.T) {
		deployAddonsManager(t, lc)
		pod := waitForReadyPod(t, lc, "tkg-system", "app=tanzu-addons-manager")
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
		// The endpoint is ready before every node's kube-proxy has programmed it: until then the
		// API server's call is refused, and an admission error says so.
		eventually(t, 30*time.Second, "the webhook rejecting noSNAT in encap mode", func() error {
			err := lc.client.Create(ctx, bad)
			if err == nil {
				t.Fatal("the webhook admitted noSNAT in encap mode")
			}
			if !strings.Contains(err.Error(), "spec.antrea.config.noSNAT") || !strings.Contains(err.Error(), "denied the request") {
				return err
			}
			return nil
		})
		good := bad.DeepCopy()
		good.Name, good.Spec.Antrea.AntreaConfigDataValue.NoSNAT = "good", false
		if err := lc.client.Create(ctx, good); err != nil {
			t.Fatalf("the webhook rejected a good AntreaConfig: %v", err)
		}
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
