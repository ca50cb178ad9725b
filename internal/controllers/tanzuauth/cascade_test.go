package tanzuauth_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/controllers/tanzuauth"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/tkg"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		e.StartManager(func(mgr ctrl.Manager) error {
			return (&tanzuauth.CascadeReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
		})
	}))
}

const ns = "auth"

func createCluster(t *testing.T, name, infraKind string, labels map[string]string) *clusterv1.Cluster {
	t.Helper()
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	c.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: infraKind, Name: name}
	if err := env.Client.Create(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

// createValues makes the Secret the ClusterBootstrap controller clones for a cluster's pinniped
// package, owned by the Cluster.
func createValues(t *testing.T, c *clusterv1.Cluster, values string) {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.Name + "-pinniped-package",
			Labels:          map[string]string{tkg.LabelPackageName: "pinniped.tanzu.vmware.com.0.25.0---vmware.1-tkg.1", tkg.LabelClusterName: c.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: c.Name, UID: c.UID}}},
		Type: addons.SecretTypeClusterBootstrap,
		Data: map[string][]byte{addons.ValuesKey: []byte(values)},
	}
	if err := env.Client.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
}

func values(t *testing.T, name string) map[string]any {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	v := map[string]any{}
	if err := yaml.Unmarshal(s.Data[addons.ValuesKey], &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// expect waits until the values of Secret name hold identity management type want, audience
// audience and endpoint.
func expect(t *testing.T, name, want, provider, endpoint, audience string) {
	t.Helper()
	envtest.Eventually(t, 20*time.Second, name+" values", func() error {
		v := values(t, name)
		p, _ := v["pinniped"].(map[string]any)
		concierge, _ := p["concierge"].(map[string]any)
		if v["identity_management_type"] != want || v["infrastructure_provider"] != provider || v["tkg_cluster_role"] != "workload" ||
			p["supervisor_svc_endpoint"] != endpoint || concierge["audience"] != audience {
			return fmt.Errorf("values %v", v)
		}
		return nil
	})
}

func TestCascade(t *testing.T) {
	ctx := t.Context()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	wl := createCluster(t, "wl", "LocalCluster", nil)
	createValues(t, wl, "infrastructure_provider: vsphere\ntkg_cluster_role: workload\npinniped:\n  supervisor_svc_external_dns: kept.example.com\n")
	vs := createCluster(t, "vs", "VSphereCluster", nil)
	createValues(t, vs, "")
	mgmt := createCluster(t, "mgmt", "LocalCluster", map[string]string{tkg.LabelManagementCluster: ""})
	const userValues = "identity_management_type: ldap\ninfrastructure_provider: local\ntkg_cluster_role: management\n"
	createValues(t, mgmt, userValues)

	t.Run("without pinniped-info, identity management is none", func(t *testing.T) {
		expect(t, "wl-pinniped-package", "none", "local", "", "")
		expect(t, "vs-pinniped-package", "none", "vsphere", "", "")
		if p := values(t, "wl-pinniped-package")["pinniped"].(map[string]any); p["supervisor_svc_external_dns"] != "kept.example.com" {
			t.Errorf("a key the cascade does not own was lost: %v", p)
		}
	})

	t.Run("pinniped-info makes every workload cluster trust the supervisor", func(t *testing.T) {
		info := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: "pinniped-info"},
			Data: map[string]string{tanzuauth.IssuerKey: "https://10.0.0.5:31234", tanzuauth.IssuerCABundleKey: "Y2EK"}}
		if err := env.Client.Create(ctx, info); err != nil {
			t.Fatal(err)
		}
		expect(t, "wl-pinniped-package", "oidc", "local", "https://10.0.0.5:31234", fmt.Sprintf("wl-%s", wl.UID))
		expect(t, "vs-pinniped-package", "oidc", "vsphere", "https://10.0.0.5:31234", fmt.Sprintf("vs-%s", vs.UID))
		if p := values(t, "wl-pinniped-package")["pinniped"].(map[string]any); p["supervisor_ca_bundle_data"] != "Y2EK" {
			t.Errorf("CA bundle: %v", p)
		}
		// The write is an Event on the values Secret, related to its Cluster.
		envtest.Eventually(t, 10*time.Second, "the PinnipedValuesWritten Event of wl", func() error {
			list := &eventsv1.EventList{}
			if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, e := range list.Items {
				if e.Reason == tanzuauth.ReasonPinnipedValuesWritten && e.Regarding.Name == "wl-pinniped-package" && e.Related != nil && e.Related.Name == "wl" &&
					strings.Contains(e.Note, "identity management oidc") {
					return nil
				}
			}
			return fmt.Errorf("%d Events, none for wl's oidc values", len(list.Items))
		})
		// Converged, the values are written no more.
		envtest.ExpectStill(t, 3*time.Second, envtest.On(env.Client,
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-pinniped-package"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vs-pinniped-package"}}))

		if err := env.Client.Delete(ctx, info); err != nil {
			t.Fatal(err)
		}
		expect(t, "wl-pinniped-package", "none", "local", "", "")
	})

	t.Run("a Secret that appears later is written too", func(t *testing.T) {
		late := createCluster(t, "late", "DockerCluster", nil)
		createValues(t, late, "")
		expect(t, "late-pinniped-package", "none", "docker", "", "")
	})

	t.Run("the management cluster's values are the user's", func(t *testing.T) {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mgmt-pinniped-package"}, s); err != nil {
			t.Fatal(err)
		}
		if string(s.Data[addons.ValuesKey]) != userValues {
			t.Errorf("management cluster's values changed to %q", s.Data[addons.ValuesKey])
		}
	})
}

// TestProviderWaitsForTheInfrastructure: a ClusterClass Cluster has no infrastructureRef until
// the topology controller makes its infrastructure. Its values are left alone until then, and
// are written with the provider it gets, never a guess.
func TestProviderWaitsForTheInfrastructure(t *testing.T) {
	ctx := t.Context()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "classy"}}
	c.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{"100.96.0.0/11"}
	if err := env.Client.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	createValues(t, c, "tkg_cluster_role: workload\n")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "classy-pinniped-package"}}
	envtest.ExpectStill(t, 3*time.Second, envtest.On(env.Client, secret))
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalCluster", Name: c.Name}
	if err := env.Client.Patch(ctx, c, patch); err != nil {
		t.Fatal(err)
	}
	expect(t, "classy-pinniped-package", "none", "local", "", "")
}
