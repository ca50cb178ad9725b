package e2e

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runv1alpha1 "github.com/slipway-dev/slipway/api/run/v1alpha1"
	"github.com/slipway-dev/slipway/internal/client/managementcluster"
	"github.com/slipway-dev/slipway/internal/controllers/addons/clustermetadata"
)

// managementPods are the pods of seeds/003's management column that run on a local management
// cluster, by namespace and name prefix. vSphere's (capv, the vSphere CPI and CSI's own
// controllers, ako, tkr-vsphere-resolver) belong to the vsphere provider.
var managementPods = map[string][]string{
	"caip-in-cluster-system":            {"caip-in-cluster-controller-manager"},
	"capi-kubeadm-bootstrap-system":     {"capi-kubeadm-bootstrap-controller-manager"},
	"capi-kubeadm-control-plane-system": {"capi-kubeadm-control-plane-controller-manager"},
	"capi-system":                       {"capi-controller-manager"},
	"cert-manager":                      {"cert-manager-", "cert-manager-cainjector", "cert-manager-webhook"},
	"kube-system":                       {"antrea-agent", "antrea-controller", "coredns", "etcd", "kube-apiserver", "kube-controller-manager", "kube-proxy", "kube-scheduler", "metrics-server"},
	"secretgen-controller":              {"secretgen-controller"},
	"tkg-system": {"kapp-controller", "object-propagation-controller-manager", "tanzu-addons-controller-manager",
		"tanzu-capabilities-controller-manager", "tanzu-featuregates-controller-manager", "tkr-conversion-webhook-manager",
		"tkr-resolver-cluster-webhook-manager", "tkr-source-controller-manager", "tkr-status-controller-manager"},
}

// checkManagementPods waits until every pod of managementPods is Running and Ready.
func checkManagementPods(t *testing.T, c client.Client) {
	t.Helper()
	checkPods(t, c, "the management column", managementPods)
}

// checkPods waits until every pod of a column of seeds/003, by namespace and name prefix, is
// Running and Ready.
func checkPods(t *testing.T, c client.Client, column string, want map[string][]string) {
	t.Helper()
	eventually(t, 3*time.Minute, column+" of seeds/003 running", func() error {
		var missing []string
		for ns, prefixes := range want {
			pods := &corev1.PodList{}
			if err := c.List(t.Context(), pods, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, p := range prefixes {
				if !hasReadyPod(pods, p) {
					missing = append(missing, ns+"/"+p)
				}
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			return fmt.Errorf("no Running and Ready pod %s", strings.Join(missing, ", "))
		}
		return nil
	})
}

// checkReleaseConversion reads the releases as v1alpha1 and v1alpha2, which the API server
// gets from the tkr-conversion-webhook.
func checkReleaseConversion(t *testing.T, c client.Client) {
	t.Helper()
	for _, version := range []string{"v1alpha1", "v1alpha2"} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("run.tanzu.vmware.com/" + version)
		list.SetKind("TanzuKubernetesReleaseList")
		if err := c.List(t.Context(), list); err != nil {
			t.Errorf("releases as %s: %v", version, err)
			continue
		}
		for _, r := range list.Items {
			k, _, _ := unstructured.NestedString(r.Object, "spec", "kubernetesVersion")
			if r.GetAPIVersion() != "run.tanzu.vmware.com/"+version || !strings.HasPrefix(k, "v1.3") || r.GetAnnotations()[runv1alpha1.ConversionDataAnnotation] == "" {
				t.Errorf("release %s as %s: apiVersion %s, kubernetesVersion %q, annotations %v", r.GetName(), version, r.GetAPIVersion(), k, r.GetAnnotations())
			}
		}
		if len(list.Items) == 0 {
			t.Errorf("no releases as %s", version)
		}
	}
}

// checkCapability asks the management cluster, as a service account of tkg-system's
// capabilities controller, whether Cluster API is served and the v1.35.4 release exists.
func checkCapability(t *testing.T, c client.Client) {
	t.Helper()
	ctx := t.Context()
	capability := &runv1alpha1.Capability{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tkg-system", Name: "e2e"},
		Spec: runv1alpha1.CapabilitySpec{ServiceAccountName: "tanzu-capabilities-manager-sa", Queries: []runv1alpha1.Query{{
			Name:                  "tkg",
			GroupVersionResources: []runv1alpha1.QueryGVR{{Name: "clusters", Group: "cluster.x-k8s.io", Versions: []string{"v1beta2"}, Resource: "clusters"}},
			Objects: []runv1alpha1.QueryObject{{Name: "capability-crd", ObjectReference: corev1.ObjectReference{
				APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "capabilities.run.tanzu.vmware.com"}}},
		}}},
	}
	if err := c.Create(ctx, capability); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the Capability answered", func() error {
		got := &runv1alpha1.Capability{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(capability), got); err != nil {
			return err
		}
		if len(got.Status.Results) != 1 {
			return fmt.Errorf("results %+v", got.Status.Results)
		}
		r := got.Status.Results[0]
		if len(r.GroupVersionResources) != 1 || !r.GroupVersionResources[0].Found {
			return fmt.Errorf("clusters: %+v", r.GroupVersionResources)
		}
		// The controller's own service account may not read CRDs: the answer says so.
		if len(r.Objects) != 1 || r.Objects[0].Found || !strings.Contains(r.Objects[0].ErrorDetail, "forbidden") {
			return fmt.Errorf("capability-crd: %+v", r.Objects)
		}
		return nil
	})
}

// clusterAPIObjects lists every Cluster API object in namespace: the objects of the kinds of
// the CRDs clusterctl installed.
func clusterAPIObjects(t *testing.T, c client.Client, namespace string) []*unstructured.UnstructuredList {
	t.Helper()
	ctx := t.Context()
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, crds, client.HasLabels{"clusterctl.cluster.x-k8s.io"}); err != nil {
		t.Fatal(err)
	}
	var lists []*unstructured.UnstructuredList
	for _, crd := range crds.Items {
		if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
			continue
		}
		var storage string
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				storage = v.Name
			}
		}
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(crd.Spec.Group + "/" + storage)
		list.SetKind(crd.Spec.Names.ListKind)
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			t.Errorf("list %s: %v", crd.Name, err)
			continue
		}
		lists = append(lists, list)
	}
	return lists
}

// stillSample reads the resourceVersions of a set of objects, by "Kind namespace/name".
type stillSample struct {
	what string
	read func() map[string]string
}

func versionsOf(lists ...*unstructured.UnstructuredList) map[string]string {
	out := map[string]string{}
	for _, list := range lists {
		for _, o := range list.Items {
			out[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
		}
	}
	return out
}

// clusterAPISample is every Cluster API object in namespace.
func clusterAPISample(t *testing.T, c client.Client, namespace string) stillSample {
	return stillSample{"Cluster API objects of " + namespace, func() map[string]string {
		return versionsOf(clusterAPIObjects(t, c, namespace)...)
	}}
}

// kindsSample is every object of the kinds (given by their list kinds' group-version-kinds) in
// namespace.
func kindsSample(t *testing.T, what string, c client.Client, namespace string, listKinds ...schema.GroupVersionKind) stillSample {
	return stillSample{what, func() map[string]string {
		var lists []*unstructured.UnstructuredList
		for _, gvk := range listKinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk)
			if err := c.List(t.Context(), list, client.InNamespace(namespace)); err != nil {
				t.Errorf("list %s: %v", gvk.Kind, err)
				continue
			}
			lists = append(lists, list)
		}
		return versionsOf(lists...)
	}}
}

// quietClients reach a cluster as cfg and from do, for lists of every kind the API server
// serves: those include deprecated kinds (v1 Endpoints), so the API server's deprecation
// warnings are not logged.
func quietClients(t *testing.T, cfg *rest.Config, from client.Client) (*discovery.DiscoveryClient, client.Client) {
	t.Helper()
	quiet := rest.CopyConfig(cfg)
	quiet.WarningHandler = rest.NoWarnings{}
	dc, err := discovery.NewDiscoveryClientForConfig(quiet)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(quiet, client.Options{Scheme: from.Scheme(), Mapper: from.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	return dc, c
}

// deployedSample is every object of a cluster that kapp deployed (labelled kapp.k14s.io/app),
// of every kind the API server lists, found by discovery.
func deployedSample(t *testing.T, what string, cfg *rest.Config, from client.Client) stillSample {
	return stillSample{what, func() map[string]string {
		dc, c := quietClients(t, cfg, from)
		// An aggregated API not serving yet (metrics-server's, moments after the cluster is
		// made) fails only its own group; the rest is listed.
		resources, err := dc.ServerPreferredResources()
		if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
			t.Errorf("discovery: %v", err)
		}
		var lists []*unstructured.UnstructuredList
		for _, rl := range resources {
			gv, _ := schema.ParseGroupVersion(rl.GroupVersion)
			for _, r := range rl.APIResources {
				if !slices.Contains(r.Verbs, "list") || strings.Contains(r.Name, "/") || r.Kind == "Event" {
					continue
				}
				list := &unstructured.UnstructuredList{}
				list.SetGroupVersionKind(gv.WithKind(r.Kind + "List"))
				if err := c.List(t.Context(), list, client.HasLabels{"kapp.k14s.io/app"}); err != nil {
					continue
				}
				lists = append(lists, list)
			}
		}
		return versionsOf(lists...)
	}}
}

// checkStill samples the resourceVersions of every set for d and fails on any object that
// changed: converged clusters do not write to their objects, as Cluster API's own e2e checks.
func checkStill(t *testing.T, d time.Duration, samples ...stillSample) {
	t.Helper()
	readAll := func() []map[string]string {
		out := make([]map[string]string, len(samples))
		for i, s := range samples {
			if out[i] = s.read(); len(out[i]) == 0 {
				t.Fatalf("no %s", s.what)
			}
		}
		return out
	}
	// Converging first: what a cluster's last controllers write just after it reports created
	// (a MachineHealthCheck's first look at its machines) settles within seconds.
	settling := time.Now()
	start := readAll()
	for quiet := 0; quiet < 2 && time.Since(settling) < time.Minute; {
		time.Sleep(5 * time.Second)
		next := readAll()
		if reflect.DeepEqual(next, start) {
			quiet++
		} else {
			quiet = 0
		}
		start = next
	}
	t.Logf("converged within %s", time.Since(settling).Round(time.Second))
	changed := make([]map[string]bool, len(samples))
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		time.Sleep(10 * time.Second)
		for i, s := range samples {
			for k, v := range s.read() {
				if start[i][k] != v {
					if changed[i] == nil {
						changed[i] = map[string]bool{}
					}
					changed[i][k] = true
				}
			}
		}
	}
	for i, s := range samples {
		if len(changed[i]) > 0 {
			names := slices.Sorted(maps.Keys(changed[i]))
			t.Errorf("in %s, %d of %d converged %s changed: %s", d, len(names), len(start[i]), s.what, strings.Join(names, ", "))
		}
		t.Logf("%d %s still for %s", len(start[i]), s.what, d)
	}
}

// publishedMetadata checks what TKG publishes in a cluster's tkg-system-public: its tkg-metadata
// and the bill of materials of its TKG version, which it names: tkg-bom-<version> on the
// management cluster, tkg-bom on a workload cluster.
func publishedMetadata(ctx context.Context, c client.Client, name, typ, tkgVersion string) error {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: clustermetadata.Namespace, Name: clustermetadata.ConfigMap}, cm); err != nil {
		return fmt.Errorf("tkg-metadata: %w", err)
	}
	bomName := clustermetadata.BOMConfigMap
	if typ == clustermetadata.TypeManagement {
		bomName = clustermetadata.BOMConfigMapPrefix + tkgVersion
	}
	md, err := clustermetadata.Parse(cm.Data[clustermetadata.MetadataKey])
	if err != nil || md.Cluster.Name != name || md.Cluster.Type != typ || md.Cluster.TKGVersion != tkgVersion || md.BOM.ConfigMapRef.Name != bomName {
		return fmt.Errorf("tkg-metadata's metadata.yaml (%v), want cluster %s of type %s, TKG %s, BOM %s:\n%s",
			err, name, typ, tkgVersion, bomName, cm.Data[clustermetadata.MetadataKey])
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: clustermetadata.Namespace, Name: bomName}, cm); err != nil {
		return fmt.Errorf("the BOM ConfigMap tkg-metadata names: %w", err)
	}
	bom := &managementcluster.BOM{}
	if err := yaml.Unmarshal([]byte(cm.Data[clustermetadata.BOMKey]), bom); err != nil || bom.Release.Version != tkgVersion || len(bom.Components["tkg.tanzu.vmware.com"]) == 0 {
		return fmt.Errorf("%s's bom.yaml (%v):\n%s", cm.Name, err, cm.Data[clustermetadata.BOMKey])
	}
	return nil
}
