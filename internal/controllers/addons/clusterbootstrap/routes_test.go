package clusterbootstrap_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"

	cniv1alpha1 "github.com/slipway-dev/slipway/api/cni/v1alpha1"
	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/controllers/addons/clusterbootstrap"
	"github.com/slipway-dev/slipway/internal/controllers/addons/webhooks"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/tkg"
)

func resolved(t *testing.T, name, tkr string) *runv1alpha3.ClusterBootstrap {
	t.Helper()
	cb := &runv1alpha3.ClusterBootstrap{}
	eventually(t, mgmt.Client, key(ns, name), cb, func(cb *runv1alpha3.ClusterBootstrap) error {
		if cb.Status.ResolvedTKR != tkr {
			return fmt.Errorf("resolvedTKR %q, want %q", cb.Status.ResolvedTKR, tkr)
		}
		return nil
	})
	return cb
}

// The four ways seeds/002 gives to customise a cluster's packages.
func TestCustomisation(t *testing.T) {
	ctx := t.Context()

	t.Run("a pre-created *Config is used instead of the template's", func(t *testing.T) {
		mine := &cniv1alpha1.AntreaConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1-antrea-package"},
			Spec: cniv1alpha1.AntreaConfigSpec{Antrea: cniv1alpha1.Antrea{AntreaConfigDataValue: cniv1alpha1.AntreaConfigDataValue{TrafficEncapMode: "hybrid"}}}}
		if err := mgmt.Client.Create(ctx, mine); err != nil {
			t.Fatal(err)
		}
		newCluster(t, "c1", tkr134, nil)
		cb := resolved(t, "c1", tkr134)
		if cb.Spec.CNI.ValuesFrom.ProviderRef.Name != "c1-antrea-package" {
			t.Errorf("cni providerRef %+v", cb.Spec.CNI.ValuesFrom.ProviderRef)
		}
		eventually(t, mgmt.Client, key(ns, "c1-antrea-package"), mine, func(a *cniv1alpha1.AntreaConfig) error {
			if a.Spec.Antrea.AntreaConfigDataValue.TrafficEncapMode != "hybrid" || len(a.OwnerReferences) == 0 {
				return fmt.Errorf("mode %q owners %v", a.Spec.Antrea.AntreaConfigDataValue.TrafficEncapMode, a.OwnerReferences)
			}
			return nil
		})
		values(t, workload.Client, sys, "c1-antrea-data-values", "trafficEncapMode: hybrid")
	})

	t.Run("a custom-clusterbootstrap Cluster waits for the user's ClusterBootstrap", func(t *testing.T) {
		newCluster(t, "c2", tkr134, map[string]string{runv1alpha3.AnnotationCustomClusterBootstrap: ""})
		envtest.Eventually(t, 20*time.Second, "the controller says c2 waits for the user's ClusterBootstrap", func() error {
			if countEvents(t, "Cluster", "c2", clusterbootstrap.ReasonWaitingForUsers) == 0 {
				return fmt.Errorf("no %s Event on Cluster c2", clusterbootstrap.ReasonWaitingForUsers)
			}
			return nil
		})
		envtest.Consistently(t, 2*time.Second, "c2 waits for the user's ClusterBootstrap", func() error {
			if err := mgmt.Client.Get(ctx, key(ns, "c2"), &runv1alpha3.ClusterBootstrap{}); err == nil {
				return fmt.Errorf("a ClusterBootstrap was cloned for a Cluster annotated custom-clusterbootstrap")
			}
			return nil
		})
		objs := []client.Object{
			&runv1alpha3.KappControllerConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c2-kapp"}},
			&cniv1alpha1.AntreaConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c2-antrea"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c2-metrics"}, StringData: map[string]string{addons.ValuesKey: "replicas: 3\n"}},
			&runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c2"}, Spec: &runv1alpha3.ClusterBootstrapTemplateSpec{
				Kapp: &runv1alpha3.ClusterBootstrapPackage{RefName: "kapp-controller.tanzu.vmware.com.0.50.0", ValuesFrom: provider("KappControllerConfig", "run.tanzu.vmware.com", "c2-kapp")},
				CNI:  &runv1alpha3.ClusterBootstrapPackage{RefName: "antrea.tanzu.vmware.com.1.11.2", ValuesFrom: provider("AntreaConfig", "cni.tanzu.vmware.com", "c2-antrea")},
				AdditionalPackages: []*runv1alpha3.ClusterBootstrapPackage{
					{RefName: "metrics-server.tanzu.vmware.com.0.6.4", ValuesFrom: &runv1alpha3.ValuesFrom{SecretRef: "c2-metrics"}}}}},
		}
		for _, o := range objs {
			if err := mgmt.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		cb := resolved(t, "c2", tkr134)
		if len(cb.Spec.AdditionalPackages) != 1 || cb.Spec.CSI != nil {
			t.Errorf("the user's ClusterBootstrap was changed: %+v", cb.Spec)
		}
		eventually(t, mgmt.Client, key(ns, "c2-antrea"), &cniv1alpha1.AntreaConfig{}, func(a *cniv1alpha1.AntreaConfig) error {
			if a.Status.SecretRef == "" || a.Labels[tkg.LabelClusterName] != "c2" {
				return fmt.Errorf("the user's AntreaConfig was not adopted: labels %v status %+v", a.Labels, a.Status)
			}
			return nil
		})
		values(t, workload.Client, sys, "c2-metrics-server-data-values", "replicas: 3")
		eventually(t, workload.Client, key(sys, "c2-antrea"), &pkgingv1alpha1.PackageInstall{}, ok)
	})

	t.Run("a partial ClusterBootstrap is completed from the annotated release", func(t *testing.T) {
		newCluster(t, "c3", tkr135, map[string]string{runv1alpha3.AnnotationCustomClusterBootstrap: ""})
		cb := &runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c3",
			Annotations: map[string]string{runv1alpha3.AnnotationAddMissingFieldsFromTKR: tkr135}},
			Spec: &runv1alpha3.ClusterBootstrapTemplateSpec{
				CNI: &runv1alpha3.ClusterBootstrapPackage{RefName: "antrea*"},
				AdditionalPackages: []*runv1alpha3.ClusterBootstrapPackage{
					{RefName: "metrics-server.tanzu.vmware.com.0.7.2", ValuesFrom: &runv1alpha3.ValuesFrom{Inline: runv1alpha3.JSONObject{"replicas": float64(5)}}}}}}
		// What the defaulting webhook does on admission.
		if err := (&webhooks.ClusterBootstrap{Client: mgmt.Client, SystemNamespace: sys}).Default(ctx, cb); err != nil {
			t.Fatal(err)
		}
		if err := mgmt.Client.Create(ctx, cb); err != nil {
			t.Fatal(err)
		}
		cb = resolved(t, "c3", tkr135)
		if cb.Spec.CNI.RefName != "antrea.tanzu.vmware.com.1.13.1" || cb.Spec.CNI.ValuesFrom.ProviderRef.Name != "c3-antrea-package" ||
			cb.Spec.Kapp.ValuesFrom.ProviderRef.Name != "c3-kapp-controller-package" || len(cb.Spec.AdditionalPackages) != 2 {
			t.Errorf("completed ClusterBootstrap: cni %+v kapp %+v additional %d", cb.Spec.CNI, cb.Spec.Kapp.ValuesFrom, len(cb.Spec.AdditionalPackages))
		}
		values(t, workload.Client, sys, "c3-metrics-server-data-values", "replicas: 5")
		values(t, workload.Client, sys, "c3-secretgen-controller-data-values", "logLevel: info")
		values(t, workload.Client, sys, "c3-antrea-data-values", "trafficEncapMode: encap")
	})
}

func TestDeletionTimesOut(t *testing.T) {
	ctx := t.Context()
	newCluster(t, "stuck", tkr134, nil)
	resolved(t, "stuck", tkr134)
	// A package whose removal never finishes, as when the workload's kapp-controller is gone.
	pi := &pkgingv1alpha1.PackageInstall{}
	eventually(t, workload.Client, key(sys, "stuck-metrics-server"), pi, ok)
	controllerutil.AddFinalizer(pi, "test.slipway.dev/hold")
	if err := workload.Client.Update(ctx, pi); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := workload.Client.Get(ctx, key(sys, "stuck-metrics-server"), pi); err == nil {
			pi.Finalizers = nil
			_ = workload.Client.Update(ctx, pi)
		}
	})
	eventually(t, mgmt.Client, key(ns, "stuck"), &clusterv1.Cluster{}, func(c *clusterv1.Cluster) error {
		if !controllerutil.ContainsFinalizer(c, addons.Finalizer) {
			return fmt.Errorf("no finalizer yet")
		}
		return nil
	})
	start := time.Now()
	if err := mgmt.Client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stuck"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, mgmt.Client, key(ns, "stuck"), &runv1alpha3.ClusterBootstrap{}, func(cb *runv1alpha3.ClusterBootstrap) error {
		c := cb.Status.Conditions.Get(clusterbootstrap.ConditionAdditionalPackagesRemoved)
		if c == nil || c.Reason != clusterbootstrap.ReasonRemovingAdditionalPackages {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	gone(t, mgmt.Client, key(ns, "stuck"), &clusterv1.Cluster{})
	// deletionTimestamp has whole seconds: the deadline may fall up to a second before start+timeout.
	if took := time.Since(start); took < deleteTimeout-time.Second {
		t.Errorf("the cluster went after %s, before the %s timeout, while a package was still there", took, deleteTimeout)
	}
	cb := &runv1alpha3.ClusterBootstrap{}
	if err := mgmt.Client.Get(ctx, key(ns, "stuck"), cb); err != nil {
		t.Fatal(err)
	}
	c := cb.Status.Conditions.Get(clusterbootstrap.ConditionAdditionalPackagesRemoved)
	if c == nil || c.Reason != clusterbootstrap.ReasonDeletionTimedOut || c.Message == "" {
		t.Errorf("after the timeout the ClusterBootstrap says %+v, want reason %s and why", c, clusterbootstrap.ReasonDeletionTimedOut)
	}
	t.Logf("deletion released after %s: %s", time.Since(start).Round(100*time.Millisecond), c.Message)
}

// TestPackagesWaitForKappControllersCRDs: a workload cluster's kapp-controller installs its
// CRDs some time after its PackageInstall on the management cluster succeeds. Until then the
// packages wait, looked at every StatusPeriod; once the CRDs are there, they are installed
// within a few periods, not after a backoff grown over the wait (CI, 2026-12-02: more than
// four minutes).
func TestPackagesWaitForKappControllersCRDs(t *testing.T) {
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	// A workload API server without kapp-controller's CRDs, which come later.
	bare, err := envtest.Start(envtest.CarvelCRDs(root))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bare.Stop() })

	cluster := newClusterOn(t, bare, ns, "late-crds", tkr134, nil)
	// Gone before its API server stops (cleanups run last first), so that the cluster cache
	// does not probe a stopped server for the rest of the package.
	t.Cleanup(func() {
		if err := mgmt.Client.Delete(context.Background(), cluster); err != nil {
			t.Error(err)
			return
		}
		envtest.Eventually(t, 30*time.Second, "Cluster late-crds gone", func() error {
			if err := mgmt.Client.Get(context.Background(), client.ObjectKeyFromObject(cluster), &clusterv1.Cluster{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
	})
	eventually(t, mgmt.Client, key(ns, "late-crds-kapp-controller"), &pkgingv1alpha1.PackageInstall{}, ok)
	// Long enough for a failure's backoff to have grown past the wait below: controller-runtime
	// doubles it from 5 ms at each failure, about 20 s after 25 s of failing.
	time.Sleep(25 * time.Second)
	// As kapp-controller does when it starts; InstallCRDs returns once they are served.
	if _, err := crenvtest.InstallCRDs(bare.Config, crenvtest.CRDInstallOptions{Paths: []string{envtest.CarvelCRDs(root)}, ErrorIfPathMissing: true}); err != nil {
		t.Fatal(err)
	}
	// Without the wait, the next retry comes some 16 s after this.
	start := time.Now()
	envtest.Eventually(t, 12*time.Second, "the packages on the workload cluster once its CRDs are", func() error {
		for _, name := range []string{"late-crds-antrea", "late-crds-metrics-server", "late-crds-secretgen-controller"} {
			if err := bare.Client.Get(t.Context(), key(sys, name), &pkgingv1alpha1.PackageInstall{}); err != nil {
				return err
			}
		}
		return nil
	})
	t.Logf("packages installed %s after the CRDs", time.Since(start).Round(100*time.Millisecond))
}

func TestManagementClusterGetsNoKappControllerInstall(t *testing.T) {
	newCluster(t, "mc", tkr134, nil, tkg.LabelManagementCluster)
	resolved(t, "mc", tkr134)
	eventually(t, workload.Client, key(sys, "mc-antrea"), &pkgingv1alpha1.PackageInstall{}, ok)
	if err := mgmt.Client.Get(t.Context(), key(ns, "mc-kapp-controller"), &pkgingv1alpha1.PackageInstall{}); err == nil {
		t.Error("a kapp-controller PackageInstall was made for the management cluster, which runs its own")
	}
}

// TestManagementClusterInTheSystemNamespace: a management cluster lives in the system namespace,
// beside the release's template values, and its ClusterBootstrap, written by the CLI before the
// Cluster, names them: they are cloned for it, not adopted (the template stays the release's),
// and its packages are installed.
func TestManagementClusterInTheSystemNamespace(t *testing.T) {
	ctx := t.Context()
	cbt := &runv1alpha3.ClusterBootstrapTemplate{}
	if err := mgmt.Client.Get(ctx, key(sys, tkr134), cbt); err != nil {
		t.Fatal(err)
	}
	written := &runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: "mgmt",
		Annotations: map[string]string{runv1alpha3.AnnotationAddMissingFieldsFromTKR: tkr134}}, Spec: cbt.Spec.DeepCopy()}
	if err := mgmt.Client.Create(ctx, written); err != nil {
		t.Fatal(err)
	}
	newClusterIn(t, sys, "mgmt", tkr134, nil, tkg.LabelManagementCluster)
	resolved := &runv1alpha3.ClusterBootstrap{}
	eventually(t, mgmt.Client, key(sys, "mgmt"), resolved, func(cb *runv1alpha3.ClusterBootstrap) error {
		if cb.Status.ResolvedTKR != tkr134 {
			return fmt.Errorf("resolvedTKR %q", cb.Status.ResolvedTKR)
		}
		return nil
	})
	if got := resolved.Spec.CNI.ValuesFrom.ProviderRef.Name; got != "mgmt-antrea-package" {
		t.Errorf("the CNI's values come from %s, want the clone mgmt-antrea-package", got)
	}
	if got := resolved.Spec.AdditionalPackages[1].ValuesFrom.SecretRef; got != "mgmt-secretgen-controller-package" {
		t.Errorf("secretgen-controller's values come from %s, want the clone mgmt-secretgen-controller-package", got)
	}
	for _, o := range []client.Object{&cniv1alpha1.AntreaConfig{}, &corev1.Secret{}} {
		name := "template-antrea"
		if _, isSecret := o.(*corev1.Secret); isSecret {
			name = "template-secretgen"
		}
		if err := mgmt.Client.Get(ctx, key(sys, name), o); err != nil {
			t.Fatal(err)
		}
		if len(o.GetOwnerReferences()) != 0 || o.GetLabels()[tkg.LabelClusterName] != "" {
			t.Errorf("the release's template %s was adopted: owners %v, labels %v", name, o.GetOwnerReferences(), o.GetLabels())
		}
	}
	eventually(t, workload.Client, key(sys, "mgmt-antrea"), &pkgingv1alpha1.PackageInstall{}, ok)
}

// TestDeletionAfterTheMachinesAreGone checks that a cluster whose workload cluster can no longer
// be reached is let go at once when Cluster API has deleted all its machines (the packages went
// with the nodes), instead of waiting for the deletion timeout (TestDeletionTimesOut waits it).
func TestDeletionAfterTheMachinesAreGone(t *testing.T) {
	ctx := t.Context()
	newCluster(t, "torn", tkr134, nil)
	resolved(t, "torn", tkr134)
	eventually(t, workload.Client, key(sys, "torn-metrics-server"), &pkgingv1alpha1.PackageInstall{}, ok)
	// The workload cluster's API server is gone, as after Cluster API deleted its machines.
	secret := &corev1.Secret{}
	if err := mgmt.Client.Get(ctx, key(ns, "torn-kubeconfig"), secret); err != nil {
		t.Fatal(err)
	}
	// A patch, not an update: the controllers may be writing the Secret's metadata meanwhile.
	before := secret.DeepCopy()
	secret.Data["value"] = []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\n" +
		"contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: x}\n")
	if err := mgmt.Client.Patch(ctx, secret, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := mgmt.Client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "torn"}}); err != nil {
		t.Fatal(err)
	}
	gone(t, mgmt.Client, key(ns, "torn"), &clusterv1.Cluster{})
	if took := time.Since(start); took > deleteTimeout-time.Second {
		t.Errorf("the cluster without machines went after %s, as at the %s timeout, not at once", took, deleteTimeout)
	}
}
