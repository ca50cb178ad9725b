package clustermetadata_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/addons/clustermetadata"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// mgmt is the management cluster; each test's workload cluster is an API server of its own.
var mgmt *envtest.Environment

// resync is the controller's Resync in these tests.
const resync = 2 * time.Second

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		mgmt = e
		if err := e.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters"}}); err != nil {
			panic(err)
		}
		e.StartManager(func(mgr ctrl.Manager) error {
			cc, err := clustercache.SetupWithManager(context.Background(), mgr, clustercache.Options{SecretClient: mgr.GetClient(),
				Client: clustercache.ClientOptions{UserAgent: "clustermetadata-test"}}, controller.Options{})
			if err != nil {
				return err
			}
			return (&clustermetadata.Reconciler{Client: mgr.GetClient(), ClusterCache: cc, Resync: resync, ReadTTL: resync}).SetupWithManager(mgr)
		})
	}))
}

// publishManagement writes the management cluster's own metadata of TKG version, as the CLI does.
func publishManagement(t *testing.T, version string) {
	t.Helper()
	md := &clustermetadata.Metadata{}
	md.Cluster.Name, md.Cluster.Type, md.Cluster.TKGVersion = "mgmt", clustermetadata.TypeManagement, version
	md.BOM.ConfigMapRef.Name = clustermetadata.BOMConfigMapPrefix + version
	if _, err := clustermetadata.Publish(t.Context(), mgmt.Client, md, []byte("release:\n  version: "+version+"\n")); err != nil {
		t.Fatal(err)
	}
}

// newWorkload starts a workload cluster's API server and makes its Cluster, labelled with a
// release, with its kubeconfig Secret, as Cluster API does; initialized says whether its control
// plane is up.
func newWorkload(t *testing.T, name string, initialized bool, annotations map[string]string) (*clusterv1.Cluster, client.Client) {
	t.Helper()
	ctx := t.Context()
	w, err := envtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: name, Annotations: annotations,
		Labels: map[string]string{runv1alpha3.LabelTKR: "v1.34.3---vmware.1-tkg.1"}}}
	cluster.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalCluster", Name: name}
	cluster.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane", Name: name}
	if err := mgmt.Client.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := w.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := mgmt.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: name + "-kubeconfig",
		Labels: map[string]string{clusterv1.ClusterNameLabel: name}}, Data: map[string][]byte{"value": kubeconfig}}); err != nil {
		t.Fatal(err)
	}
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	cluster.Status.Initialization.ControlPlaneInitialized = ptr.To(initialized)
	if err := mgmt.Client.Status().Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	return cluster, w.Client
}

// published reads the workload cluster's metadata and BOM.
func published(ctx context.Context, c client.Client) (*clustermetadata.Metadata, string, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: clustermetadata.Namespace, Name: clustermetadata.ConfigMap}, cm); err != nil {
		return nil, "", err
	}
	md, err := clustermetadata.Parse(cm.Data[clustermetadata.MetadataKey])
	if err != nil {
		return nil, "", err
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: clustermetadata.Namespace, Name: md.BOM.ConfigMapRef.Name}, cm); err != nil {
		return nil, "", err
	}
	return md, cm.Data[clustermetadata.BOMKey], nil
}

// TestWorkloadClusterMetadata: a workload cluster gets its tkg-metadata and the management
// cluster's BOM as tkg-bom once its control plane is up, readable by every authenticated user;
// a management cluster upgrade (a new BOM) and a deleted ConfigMap are followed within the
// resync; the management cluster's own Cluster is left to the CLI.
func TestWorkloadClusterMetadata(t *testing.T) {
	ctx := t.Context()
	publishManagement(t, "v2.5.1")
	before := envtest.Reconciles(t, "clustermetadata")
	cluster, remote := newWorkload(t, "wc", false, map[string]string{tkg.AnnotationPlan: "prodcc"})
	// Nothing before the control plane is up, once the controller has looked at the Cluster.
	envtest.ReconciledSince(t, "clustermetadata", before)
	envtest.Consistently(t, 2*resync, "no metadata before the control plane is initialized", func() error {
		if _, _, err := published(ctx, remote); !apierrors.IsNotFound(err) {
			return fmt.Errorf("metadata published: %v", err)
		}
		return nil
	})
	cluster.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	if err := mgmt.Client.Status().Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, 20*time.Second, "the workload cluster's metadata", func() error {
		md, bom, err := published(ctx, remote)
		if err != nil {
			return err
		}
		c := md.Cluster
		if c.Name != "wc" || c.Type != "workload" || c.Plan != "prod" || c.TKGVersion != "v2.5.1" || c.Edition != "tkg" ||
			c.Infrastructure.Provider != "local" || c.KubernetesProvider != "VMware Tanzu Kubernetes Grid" || md.BOM.ConfigMapRef.Name != "tkg-bom" {
			return fmt.Errorf("metadata %+v", md)
		}
		if bom != "release:\n  version: v2.5.1\n" {
			return fmt.Errorf("bom.yaml %q", bom)
		}
		return nil
	})
	role := &rbacv1.Role{}
	if err := remote.Get(ctx, client.ObjectKey{Namespace: clustermetadata.Namespace, Name: "tkg-metadata-reader"}, role); err != nil {
		t.Fatal(err)
	}
	if got := role.Rules[0].ResourceNames; len(got) != 2 || got[0] != "tkg-metadata" || got[1] != "tkg-bom" {
		t.Errorf("the reader Role names %v, want tkg-metadata and tkg-bom", got)
	}

	// The management cluster is upgraded, and the workload cluster's ConfigMap deleted by hand.
	publishManagement(t, "v2.5.2")
	if err := remote.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: clustermetadata.Namespace, Name: clustermetadata.ConfigMap}}); err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, 20*time.Second, "the metadata after the upgrade", func() error {
		md, bom, err := published(ctx, remote)
		if err != nil {
			return err
		}
		if md.Cluster.TKGVersion != "v2.5.2" || bom != "release:\n  version: v2.5.2\n" {
			return fmt.Errorf("TKG %s, bom.yaml %q", md.Cluster.TKGVersion, bom)
		}
		return nil
	})

	// Converged, the metadata is looked at every resync and written no more.
	envtest.ExpectStill(t, 3*resync, envtest.On(remote,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: clustermetadata.Namespace, Name: clustermetadata.ConfigMap}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: clustermetadata.Namespace, Name: clustermetadata.BOMConfigMap}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: clustermetadata.Namespace, Name: "tkg-metadata-reader"}}))

	// The management cluster's own Cluster keeps the metadata the CLI wrote (tkg-bom-<version>):
	// the controller writes nothing into it, while it mends the workload cluster's meanwhile.
	_, own := newWorkload(t, "mc", true, nil)
	mc := &clusterv1.Cluster{}
	if err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "clusters", Name: "mc"}, mc); err != nil {
		t.Fatal(err)
	}
	mc.Labels[tkg.LabelManagementCluster] = ""
	if err := mgmt.Client.Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := remote.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: clustermetadata.Namespace, Name: clustermetadata.ConfigMap}}); err != nil {
			t.Fatal(err)
		}
		envtest.Eventually(t, 20*time.Second, "the workload cluster's metadata mended", func() error {
			_, _, err := published(ctx, remote)
			return err
		})
	}
	if err := own.Get(ctx, client.ObjectKey{Namespace: clustermetadata.Namespace, Name: clustermetadata.ConfigMap}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("the management cluster's own Cluster got a %s from the controller: %v", clustermetadata.ConfigMap, err)
	}
}

// TestOf names the plans and the provider as TKG does.
func TestOf(t *testing.T) {
	for _, tc := range []struct{ plan, want string }{{"", "dev"}, {"devcc", "dev"}, {"prodcc", "prod"}, {"prod", "prod"}, {"custom", "custom"}} {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{tkg.AnnotationPlan: tc.plan}}}
		c.Spec.InfrastructureRef.Kind = "VSphereCluster"
		c.Spec.Topology.ClassRef.Name = "tkg-vsphere-default-v1.0.0"
		md := clustermetadata.Of(c, "v2.5.2")
		if md.Cluster.Plan != tc.want || md.Cluster.Infrastructure.Provider != "vsphere" || !md.Cluster.IsClusterClassBased {
			t.Errorf("plan %q: %+v, want plan %s, provider vsphere, ClusterClass-based", tc.plan, md.Cluster, tc.want)
		}
	}
}
