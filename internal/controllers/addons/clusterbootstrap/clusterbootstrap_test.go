package clusterbootstrap_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	cniv1alpha1 "github.com/slipway-dev/slipway/api/cni/v1alpha1"
	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/controllers/addons/clusterbootstrap"
	"github.com/slipway-dev/slipway/internal/controllers/addons/configs"
	"github.com/slipway-dev/slipway/internal/controllers/addons/webhooks"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/tkg"
)

const (
	ns     = "clusters"
	sys    = tkg.SystemNamespace
	tkr134 = "v1.34.3---vmware.1-tkg.1"
	tkr135 = "v1.35.4---vmware.1-tkg.1"
	// deleteTimeout is the controller's DeleteTimeout in these tests.
	deleteTimeout = 4 * time.Second
)

// mgmt is the management cluster; workload is the one API server every test cluster's
// kubeconfig Secret points at.
var mgmt, workload *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		mgmt = e
		w, err := envtest.Start()
		if err != nil {
			panic(err)
		}
		workload = w
		e.OnStop(func() { _ = w.Stop() })
		if err := fixtures(context.Background(), e.Client); err != nil {
			panic(err)
		}
		e.StartManager(func(mgr ctrl.Manager) error {
			cc, err := clustercache.SetupWithManager(context.Background(), mgr, clustercache.Options{SecretClient: mgr.GetClient(), Client: clustercache.ClientOptions{UserAgent: "clusterbootstrap-test"}}, controller.Options{})
			if err != nil {
				return err
			}
			return (&clusterbootstrap.Reconciler{Client: mgr.GetClient(), ClusterCache: cc, StatusPeriod: 300 * time.Millisecond,
				DeleteTimeout: deleteTimeout}).SetupWithManager(mgr)
		}, configs.SetupAll)
	}))
}

func pkg(refName, version string) *datapkgingv1alpha1.Package {
	return &datapkgingv1alpha1.Package{
		ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: refName + "." + version},
		Spec: datapkgingv1alpha1.PackageSpec{RefName: refName, Version: version,
			Template: datapkgingv1alpha1.AppTemplateSpec{Spec: &kappctrlv1alpha1.AppSpec{}}},
	}
}

func provider(kind, group, name string) *runv1alpha3.ValuesFrom {
	return &runv1alpha3.ValuesFrom{ProviderRef: &corev1.TypedLocalObjectReference{APIGroup: ptr.To(group), Kind: kind, Name: name}}
}

var templateConfig = map[string]string{tkg.AnnotationTemplateConfig: "true"}

// release makes a TKR and its ClusterBootstrapTemplate: kapp-controller and antrea with values
// from template *Configs, metrics-server with inline values, secretgen-controller with a
// Secret.
func release(name, kapp, antrea, metrics, secretgen string) []client.Object {
	tkr := &runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: runv1alpha3.TanzuKubernetesReleaseSpec{Version: strings.ReplaceAll(name, "---", "+"), Kubernetes: runv1alpha3.KubernetesSpec{Version: strings.SplitN(strings.ReplaceAll(name, "---", "+"), "-", 2)[0]}}}
	for _, p := range []string{kapp, antrea, metrics, secretgen} {
		tkr.Spec.BootstrapPackages = append(tkr.Spec.BootstrapPackages, corev1.LocalObjectReference{Name: p})
	}
	cbt := &runv1alpha3.ClusterBootstrapTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: name}, Spec: &runv1alpha3.ClusterBootstrapTemplateSpec{
		Kapp: &runv1alpha3.ClusterBootstrapPackage{RefName: kapp, ValuesFrom: provider("KappControllerConfig", "run.tanzu.vmware.com", "template-kapp")},
		CNI:  &runv1alpha3.ClusterBootstrapPackage{RefName: antrea, ValuesFrom: provider("AntreaConfig", "cni.tanzu.vmware.com", "template-antrea")},
		AdditionalPackages: []*runv1alpha3.ClusterBootstrapPackage{
			{RefName: metrics, ValuesFrom: &runv1alpha3.ValuesFrom{Inline: runv1alpha3.JSONObject{"replicas": float64(2)}}},
			{RefName: secretgen, ValuesFrom: &runv1alpha3.ValuesFrom{SecretRef: "template-secretgen"}},
		}}}
	return []client.Object{tkr, cbt}
}

func fixtures(ctx context.Context, c client.Client) error {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sys}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		pkg("kapp-controller.tanzu.vmware.com", "0.50.0"), pkg("kapp-controller.tanzu.vmware.com", "0.50.1"),
		pkg("antrea.tanzu.vmware.com", "1.11.2"), pkg("antrea.tanzu.vmware.com", "1.13.1"),
		pkg("metrics-server.tanzu.vmware.com", "0.6.4"), pkg("metrics-server.tanzu.vmware.com", "0.7.2"),
		pkg("secretgen-controller.tanzu.vmware.com", "0.14.2"), pkg("secretgen-controller.tanzu.vmware.com", "0.15.0"),
		&runv1alpha3.KappControllerConfig{ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: "template-kapp", Annotations: templateConfig},
			Spec: runv1alpha3.KappControllerConfigSpec{Namespace: "tkg-system"}},
		&cniv1alpha1.AntreaConfig{ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: "template-antrea", Annotations: templateConfig},
			Spec: cniv1alpha1.AntreaConfigSpec{Antrea: cniv1alpha1.Antrea{AntreaConfigDataValue: cniv1alpha1.AntreaConfigDataValue{TrafficEncapMode: "encap"}}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: "template-secretgen", Annotations: templateConfig}, StringData: map[string]string{addons.ValuesKey: "logLevel: info\n"}},
	}
	objs = append(objs, release(tkr134, "kapp-controller.tanzu.vmware.com.0.50.0", "antrea.tanzu.vmware.com.1.11.2",
		"metrics-server.tanzu.vmware.com.0.6.4", "secretgen-controller.tanzu.vmware.com.0.14.2")...)
	objs = append(objs, release(tkr135, "kapp-controller.tanzu.vmware.com.0.50.1", "antrea.tanzu.vmware.com.1.13.1",
		"metrics-server.tanzu.vmware.com.0.7.2", "secretgen-controller.tanzu.vmware.com.0.15.0")...)
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("%s: %w", o.GetName(), err)
		}
	}
	return nil
}

// newCluster makes a Cluster on a release whose control plane is up, with a kubeconfig Secret
// pointing at the workload API server, as Cluster API would.
func newCluster(t *testing.T, name, tkr string, annotations map[string]string, labels ...string) *clusterv1.Cluster {
	t.Helper()
	return newClusterIn(t, ns, name, tkr, annotations, labels...)
}

// newClusterIn is newCluster in another namespace.
func newClusterIn(t *testing.T, ns, name, tkr string, annotations map[string]string, labels ...string) *clusterv1.Cluster {
	t.Helper()
	return newClusterOn(t, workload, ns, name, tkr, annotations, labels...)
}

// newClusterOn is newClusterIn with another workload API server.
func newClusterOn(t *testing.T, server *envtest.Environment, ns, name, tkr string, annotations map[string]string, labels ...string) *clusterv1.Cluster {
	t.Helper()
	ctx := t.Context()
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{runv1alpha3.LabelTKR: tkr}, Annotations: annotations}}
	for _, l := range labels {
		cluster.Labels[l] = ""
	}
	cluster.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{"100.96.0.0/11"}
	cluster.Spec.ClusterNetwork.Services.CIDRBlocks = []string{"100.64.0.0/13"}
	if err := mgmt.Client.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := server.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := mgmt.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-kubeconfig",
		Labels: map[string]string{clusterv1.ClusterNameLabel: name}}, Data: map[string][]byte{"value": kubeconfig}}); err != nil {
		t.Fatal(err)
	}
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	cluster.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	if err := mgmt.Client.Status().Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	return cluster
}

// eventually polls get until check passes.
func eventually[T client.Object](t *testing.T, c client.Client, key client.ObjectKey, obj T, check func(T) error) {
	t.Helper()
	envtest.Eventually(t, 20*time.Second, fmt.Sprintf("%T %s", obj, key), func() error {
		if err := c.Get(t.Context(), key, obj); err != nil {
			return err
		}
		return check(obj)
	})
}

func ok[T any](T) error { return nil }

func key(namespace, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: namespace, Name: name}
}

func values(t *testing.T, c client.Client, namespace, name, want string) {
	t.Helper()
	eventually(t, c, key(namespace, name), &corev1.Secret{}, func(s *corev1.Secret) error {
		if !strings.Contains(string(s.Data[addons.ValuesKey]), want) {
			return fmt.Errorf("values %q do not contain %q", s.Data[addons.ValuesKey], want)
		}
		return nil
	})
}

func constraints(t *testing.T, c client.Client, namespace, name, version string) {
	t.Helper()
	eventually(t, c, key(namespace, name), &pkgingv1alpha1.PackageInstall{}, func(pi *pkgingv1alpha1.PackageInstall) error {
		if got := pi.Spec.PackageRef.VersionSelection.Constraints; got != version {
			return fmt.Errorf("version constraint %q, want %q", got, version)
		}
		return nil
	})
}

func TestClusterLifecycle(t *testing.T) {
	ctx := t.Context()
	newCluster(t, "wl", tkr134, nil)
	cb := &runv1alpha3.ClusterBootstrap{}

	t.Run("creation clones the release's template and installs the packages", func(t *testing.T) {
		eventually(t, mgmt.Client, key(ns, "wl"), cb, func(cb *runv1alpha3.ClusterBootstrap) error {
			if cb.Status.ResolvedTKR != tkr134 {
				return fmt.Errorf("resolvedTKR %q", cb.Status.ResolvedTKR)
			}
			return nil
		})
		if cb.Spec.CNI.ValuesFrom.ProviderRef.Name != "wl-antrea-package" || cb.Spec.Kapp.ValuesFrom.ProviderRef.Name != "wl-kapp-controller-package" ||
			cb.Spec.AdditionalPackages[1].ValuesFrom.SecretRef != "wl-secretgen-controller-package" {
			t.Fatalf("the ClusterBootstrap does not point at the clones: %+v %+v %+v", cb.Spec.CNI.ValuesFrom, cb.Spec.Kapp.ValuesFrom, cb.Spec.AdditionalPackages[1].ValuesFrom)
		}
		if ref := metav1.GetControllerOf(cb); ref == nil || ref.Kind != "Cluster" || ref.Name != "wl" {
			t.Errorf("ClusterBootstrap controller owner %v, want Cluster wl", ref)
		}
		antrea := &cniv1alpha1.AntreaConfig{}
		eventually(t, mgmt.Client, key(ns, "wl-antrea-package"), antrea, func(a *cniv1alpha1.AntreaConfig) error {
			if a.Status.SecretRef != "wl-antrea-data-values" {
				return fmt.Errorf("status.secretRef %q", a.Status.SecretRef)
			}
			return nil
		})
		if _, template := antrea.Annotations[tkg.AnnotationTemplateConfig]; template || antrea.Labels[tkg.LabelClusterName] != "wl" || len(antrea.OwnerReferences) != 2 {
			t.Errorf("cloned AntreaConfig: annotations %v labels %v owners %v", antrea.Annotations, antrea.Labels, antrea.OwnerReferences)
		}
		values(t, mgmt.Client, ns, "wl-antrea-data-values", "serviceCIDR: 100.64.0.0/13")
		values(t, mgmt.Client, ns, "wl-kapp-controller-data-values", "coreDNSIP: 100.64.0.10")

		kapp := &pkgingv1alpha1.PackageInstall{}
		eventually(t, mgmt.Client, key(ns, "wl-kapp-controller"), kapp, ok)
		if !kapp.Spec.NoopDelete || kapp.Spec.Cluster == nil || kapp.Spec.Cluster.KubeconfigSecretRef.Name != "wl-kubeconfig" ||
			kapp.Spec.PackageRef.VersionSelection.Constraints != "0.50.0" || kapp.Spec.Values[0].SecretRef.Name != "wl-kapp-controller-data-values" {
			t.Errorf("kapp-controller PackageInstall: %+v", kapp.Spec)
		}
		for _, name := range []string{"wl-antrea", "wl-metrics-server", "wl-secretgen-controller"} {
			pi := &pkgingv1alpha1.PackageInstall{}
			eventually(t, workload.Client, key(sys, name), pi, ok)
			if pi.Spec.ServiceAccountName != addons.ServiceAccount || pi.Spec.Values[0].SecretRef.Name != name+"-data-values" {
				t.Errorf("workload PackageInstall %s: %+v", name, pi.Spec)
			}
		}
		values(t, workload.Client, sys, "wl-antrea-data-values", "trafficEncapMode: encap")
		values(t, workload.Client, sys, "wl-metrics-server-data-values", "replicas: 2")
		values(t, workload.Client, sys, "wl-secretgen-controller-data-values", "logLevel: info")
		eventually(t, workload.Client, key(sys, "antrea.tanzu.vmware.com.1.11.2"), &datapkgingv1alpha1.Package{}, ok)
		eventually(t, workload.Client, key("", addons.ClusterRoleBinding), &rbacv1.ClusterRoleBinding{}, ok)
		if err := workload.Client.Get(ctx, key(sys, "wl-kapp-controller"), &pkgingv1alpha1.PackageInstall{}); !apierrors.IsNotFound(err) {
			t.Errorf("kapp-controller is installed from the management cluster, not on the workload cluster: %v", err)
		}
		for _, o := range []client.Object{&clusterv1.Cluster{}, &corev1.Secret{}, &runv1alpha3.ClusterBootstrap{}} {
			name := "wl"
			if _, isSecret := o.(*corev1.Secret); isSecret {
				name = "wl-kubeconfig"
			}
			eventually(t, mgmt.Client, key(ns, name), o, func(o client.Object) error {
				if !controllerutil.ContainsFinalizer(o, addons.Finalizer) {
					return fmt.Errorf("no finalizer %s", addons.Finalizer)
				}
				return nil
			})
		}
	})

	// Cluster API's resilience contract (its e2e framework's owner-reference and finalizer
	// validators, as after a velero restore): what the controller made for the cluster gets its
	// owners back once they are removed: the ClusterBootstrap its Cluster, the cloned *Config and
	// values Secrets the Cluster and the ClusterBootstrap, the values written from a *Config the
	// *Config; and the objects it holds get their finalizers back: the Cluster, its kubeconfig
	// Secret and the ClusterBootstrap.
	t.Run("what the controller made gets its owner references and finalizers back", func(t *testing.T) {
		held := []client.Object{
			&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-kubeconfig"}},
			&runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl"}},
		}
		for _, o := range held {
			if err := mgmt.Client.Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
				t.Fatal(err)
			}
		}
		owned := []struct {
			obj    client.Object
			owners []string
		}{
			{&runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl"}}, []string{"Cluster/wl"}},
			{&cniv1alpha1.AntreaConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-antrea-package"}}, []string{"Cluster/wl", "ClusterBootstrap/wl"}},
			{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-metrics-server-package"}}, []string{"Cluster/wl", "ClusterBootstrap/wl"}},
			{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-secretgen-controller-package"}}, []string{"Cluster/wl", "ClusterBootstrap/wl"}},
			// The values the configs controller writes from the AntreaConfig.
			{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-antrea-data-values"}}, []string{"AntreaConfig/wl-antrea-package"}},
		}
		for _, o := range owned {
			if err := mgmt.Client.Patch(ctx, o.obj, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"ownerReferences":null}}`))); err != nil {
				t.Fatal(err)
			}
		}
		for _, o := range owned {
			eventually(t, mgmt.Client, client.ObjectKeyFromObject(o.obj), o.obj, func(obj client.Object) error {
				kinds := map[string]bool{}
				for _, ref := range obj.GetOwnerReferences() {
					kinds[ref.Kind+"/"+ref.Name] = true
				}
				for _, want := range o.owners {
					if !kinds[want] {
						return fmt.Errorf("owners %v, want %v", obj.GetOwnerReferences(), o.owners)
					}
				}
				return nil
			})
		}
		for _, o := range held {
			eventually(t, mgmt.Client, client.ObjectKeyFromObject(o), o, func(obj client.Object) error {
				if !controllerutil.ContainsFinalizer(obj, addons.Finalizer) {
					return fmt.Errorf("finalizers %v, want %s", obj.GetFinalizers(), addons.Finalizer)
				}
				return nil
			})
		}
	})

	t.Run("the PackageInstalls' state comes back as conditions", func(t *testing.T) {
		setState(t, "wl-antrea", kappctrlv1alpha1.ReconcileFailed, "kapp: Error: waiting on reconcile deployment/antrea-controller")
		condition(t, "wl", "Antrea-ReconcileFailed", "kapp: Error: waiting on reconcile deployment/antrea-controller")
		setState(t, "wl-antrea", kappctrlv1alpha1.ReconcileSucceeded, "")
		condition(t, "wl", "Antrea-ReconcileSucceeded", "")
		if err := mgmt.Client.Get(ctx, key(ns, "wl"), cb); err != nil {
			t.Fatal(err)
		}
		if cb.Status.Conditions.Get("Antrea-ReconcileFailed") != nil {
			t.Errorf("the failure condition stayed: %+v", cb.Status.Conditions)
		}
	})

	t.Run("a deploy its kapp-controller abandoned is kicked", func(t *testing.T) {
		// The App of wl-antrea is mid-deploy, its deploy started a minute before the only
		// kapp-controller running on the cluster: the one that started it is gone.
		deployStarted := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
		app := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: "wl-antrea"}}
		if err := workload.Client.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = workload.Client.Delete(context.Background(), app) })
		app.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.Reconciling, Status: corev1.ConditionTrue}}
		app.Status.Deploy = &kappctrlv1alpha1.AppStatusDeploy{StartedAt: deployStarted}
		app.Status.ObservedGeneration = app.Generation
		if err := workload.Client.Status().Update(ctx, app); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: "kapp-controller-0", Labels: map[string]string{"app": "kapp-controller"}},
			Spec: corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false), Containers: []corev1.Container{
				{Name: "kapp-controller", Image: "kapp-controller"}, {Name: "kapp-controller-sidecarexec", Image: "kapp-controller"}}},
		}
		if err := workload.Client.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = workload.Client.Delete(context.Background(), pod) })
		running := func(name string, at time.Time) corev1.ContainerStatus {
			return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at)}}}
		}
		// Its sidecar, older than the deploy, is not kapp-controller.
		pod.Status.Phase = corev1.PodRunning
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{running("kapp-controller", time.Now()), running("kapp-controller-sidecarexec", time.Now().Add(-time.Hour))}
		if err := workload.Client.Status().Update(ctx, pod); err != nil {
			t.Fatal(err)
		}
		setState(t, "wl-antrea", kappctrlv1alpha1.Reconciling, "")

		// The PackageInstall is paused, as kctrl's kick pauses it, naming the abandoned deploy.
		pi := &pkgingv1alpha1.PackageInstall{}
		eventually(t, workload.Client, key(sys, "wl-antrea"), pi, func(pi *pkgingv1alpha1.PackageInstall) error {
			if !pi.Spec.Paused || pi.Annotations[clusterbootstrap.AnnotationKick] != deployStarted.UTC().Format(time.RFC3339) {
				return fmt.Errorf("paused %t, annotations %v", pi.Spec.Paused, pi.Annotations)
			}
			return nil
		})
		// It stays paused until kapp-controller has paused the App.
		envtest.Consistently(t, time.Second, "wl-antrea paused while its App is not", func() error {
			if err := workload.Client.Get(ctx, key(sys, "wl-antrea"), pi); err != nil || !pi.Spec.Paused {
				return fmt.Errorf("paused %t (%v)", pi.Spec.Paused, err)
			}
			return nil
		})
		app.Spec.Paused = true
		if err := workload.Client.Update(ctx, app); err != nil {
			t.Fatal(err)
		}
		app.Status.ObservedGeneration = app.Generation
		if err := workload.Client.Status().Update(ctx, app); err != nil {
			t.Fatal(err)
		}
		eventually(t, workload.Client, key(sys, "wl-antrea"), pi, func(pi *pkgingv1alpha1.PackageInstall) error {
			if _, kicking := pi.Annotations[clusterbootstrap.AnnotationKick]; pi.Spec.Paused || kicking {
				return fmt.Errorf("paused %t, annotations %v", pi.Spec.Paused, pi.Annotations)
			}
			return nil
		})
		// The recorder writes Events after the reconcile that records them: one is waited for.
		envtest.Eventually(t, 10*time.Second, "one Event "+clusterbootstrap.ReasonPackageKicked, func() error {
			if n := countEvents(t, "ClusterBootstrap", "wl", clusterbootstrap.ReasonPackageKicked); n != 1 {
				return fmt.Errorf("%d %s Events, want 1", n, clusterbootstrap.ReasonPackageKicked)
			}
			return nil
		})

		// A deploy the running kapp-controller started is its own: it is left alone.
		app.Spec.Paused = false
		if err := workload.Client.Update(ctx, app); err != nil {
			t.Fatal(err)
		}
		app.Status.Deploy.StartedAt = metav1.NewTime(time.Now().Add(time.Second))
		app.Status.ObservedGeneration = app.Generation
		if err := workload.Client.Status().Update(ctx, app); err != nil {
			t.Fatal(err)
		}
		setState(t, "wl-antrea", kappctrlv1alpha1.Reconciling, "")
		condition(t, "wl", "Antrea-Reconciling", "")
		envtest.Consistently(t, 2*time.Second, "wl-antrea not kicked", func() error {
			if err := workload.Client.Get(ctx, key(sys, "wl-antrea"), pi); err != nil || pi.Spec.Paused {
				return fmt.Errorf("paused %t (%v)", pi.Spec.Paused, err)
			}
			return nil
		})
		setState(t, "wl-antrea", kappctrlv1alpha1.ReconcileSucceeded, "")
		condition(t, "wl", "Antrea-ReconcileSucceeded", "")
	})

	t.Run("a day-2 values change reaches the workload cluster", func(t *testing.T) {
		antrea := &cniv1alpha1.AntreaConfig{}
		if err := mgmt.Client.Get(ctx, key(ns, "wl-antrea-package"), antrea); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(antrea.DeepCopy())
		antrea.Spec.Antrea.AntreaConfigDataValue.TrafficEncapMode = "noEncap"
		if err := mgmt.Client.Patch(ctx, antrea, patch); err != nil {
			t.Fatal(err)
		}
		values(t, workload.Client, sys, "wl-antrea-data-values", "trafficEncapMode: noEncap")
	})

	t.Run("a converged cluster's objects stay still", func(t *testing.T) {
		// The controller looks again every StatusPeriod (300 ms) while the workload packages
		// have not succeeded, which nothing reconciles here: ten passes that must write nothing.
		mgmtObjects := []client.Object{
			&runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl"}},
			&pkgingv1alpha1.PackageInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-kapp-controller"}},
			&cniv1alpha1.AntreaConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-antrea-package"}},
			&runv1alpha3.KappControllerConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-kapp-controller-package"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-antrea-data-values"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-secretgen-controller-package"}},
			&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl"}},
		}
		var workloadObjects []client.Object
		for _, name := range []string{"wl-antrea", "wl-metrics-server", "wl-secretgen-controller"} {
			workloadObjects = append(workloadObjects,
				&pkgingv1alpha1.PackageInstall{ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: name}},
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: name + "-data-values"}})
		}
		envtest.ExpectStill(t, 3*time.Second, envtest.On(mgmt.Client, mgmtObjects...), envtest.On(workload.Client, workloadObjects...))
	})

	t.Run("a ClusterBootstrap whose status was lost, as clusterctl move loses it, is not adopted again", func(t *testing.T) {
		if err := mgmt.Client.Get(ctx, key(ns, "wl"), cb); err != nil {
			t.Fatal(err)
		}
		generation := cb.Generation
		patch := client.MergeFrom(cb.DeepCopy())
		cb.Status.ResolvedTKR = ""
		if err := mgmt.Client.Status().Patch(ctx, cb, patch); err != nil {
			t.Fatal(err)
		}
		eventually(t, mgmt.Client, key(ns, "wl"), cb, func(cb *runv1alpha3.ClusterBootstrap) error {
			if cb.Status.ResolvedTKR != tkr134 {
				return fmt.Errorf("resolvedTKR %q", cb.Status.ResolvedTKR)
			}
			return nil
		})
		if cb.Generation != generation {
			t.Errorf("the spec changed (generation %d → %d) when only the status was to be restored", generation, cb.Generation)
		}
		if n := countEvents(t, "ClusterBootstrap", "wl", clusterbootstrap.ReasonAdopted); n != 0 {
			t.Errorf("%d %s Events: the controller's own ClusterBootstrap was adopted as a user's", n, clusterbootstrap.ReasonAdopted)
		}
	})

	t.Run("what users should see is recorded as Events", func(t *testing.T) {
		for _, reason := range []string{clusterbootstrap.ReasonCloned, clusterbootstrap.ReasonPackageFailed} {
			envtest.Eventually(t, 10*time.Second, "Event "+reason, func() error {
				if countEvents(t, "ClusterBootstrap", "wl", reason) == 0 {
					return fmt.Errorf("no %s Event on ClusterBootstrap %s/wl", reason, ns)
				}
				return nil
			})
		}
	})

	t.Run("upgrade moves every package to the new release and keeps the values", func(t *testing.T) {
		cluster := &clusterv1.Cluster{}
		if err := mgmt.Client.Get(ctx, key(ns, "wl"), cluster); err != nil {
			t.Fatal(err)
		}
		// What the TKR resolver and the pause webhook do to an upgraded Cluster.
		patch := client.MergeFrom(cluster.DeepCopy())
		cluster.Labels[runv1alpha3.LabelTKR] = tkr135
		if err := (&webhooks.ClusterPause{Client: mgmt.Client}).Default(ctx, cluster); err != nil {
			t.Fatal(err)
		}
		if err := mgmt.Client.Patch(ctx, cluster, patch); err != nil {
			t.Fatal(err)
		}
		eventually(t, mgmt.Client, key(ns, "wl"), cb, func(cb *runv1alpha3.ClusterBootstrap) error {
			if cb.Status.ResolvedTKR != tkr135 {
				return fmt.Errorf("resolvedTKR %q", cb.Status.ResolvedTKR)
			}
			return nil
		})
		if cb.Spec.CNI.RefName != "antrea.tanzu.vmware.com.1.13.1" || cb.Spec.AdditionalPackages[0].RefName != "metrics-server.tanzu.vmware.com.0.7.2" ||
			cb.Spec.CNI.ValuesFrom.ProviderRef.Name != "wl-antrea-package" {
			t.Errorf("upgraded ClusterBootstrap: cni %+v, additional %s", cb.Spec.CNI, cb.Spec.AdditionalPackages[0].RefName)
		}
		constraints(t, workload.Client, sys, "wl-antrea", "1.13.1")
		constraints(t, workload.Client, sys, "wl-secretgen-controller", "0.15.0")
		constraints(t, mgmt.Client, ns, "wl-kapp-controller", "0.50.1")
		eventually(t, workload.Client, key(sys, "antrea.tanzu.vmware.com.1.13.1"), &datapkgingv1alpha1.Package{}, ok)
		values(t, workload.Client, sys, "wl-antrea-data-values", "trafficEncapMode: noEncap")
		eventually(t, mgmt.Client, key(ns, "wl"), cluster, func(c *clusterv1.Cluster) error {
			if ptr.Deref(c.Spec.Paused, false) || c.Annotations[tkg.AnnotationPaused] != "" {
				return fmt.Errorf("still paused: %v %v", c.Spec.Paused, c.Annotations)
			}
			return nil
		})
	})

	t.Run("deletion removes the additional packages, then lets the cluster go", func(t *testing.T) {
		if err := mgmt.Client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl"}}); err != nil {
			t.Fatal(err)
		}
		gone(t, mgmt.Client, key(ns, "wl"), &clusterv1.Cluster{})
		for _, name := range []string{"wl-metrics-server", "wl-secretgen-controller"} {
			gone(t, workload.Client, key(sys, name), &pkgingv1alpha1.PackageInstall{})
		}
		if err := workload.Client.Get(ctx, key(sys, "wl-antrea"), &pkgingv1alpha1.PackageInstall{}); err != nil {
			t.Errorf("the core packages stay with the cluster's nodes: %v", err)
		}
	})
}

// countEvents counts the events.k8s.io Events of a reason about an object of the test namespace.
func countEvents(t *testing.T, kind, name, reason string) int {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := mgmt.Client.List(t.Context(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == reason {
			n++
		}
	}
	return n
}

func setState(t *testing.T, name string, typ kappctrlv1alpha1.ConditionType, message string) {
	t.Helper()
	pi := &pkgingv1alpha1.PackageInstall{}
	eventually(t, workload.Client, key(sys, name), pi, ok)
	pi.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: typ, Status: corev1.ConditionTrue}}
	pi.Status.UsefulErrorMessage = message
	pi.Status.FriendlyDescription = string(typ)
	if err := workload.Client.Status().Update(t.Context(), pi); err != nil {
		t.Fatal(err)
	}
}

func condition(t *testing.T, cluster, typ, message string) {
	t.Helper()
	eventually(t, mgmt.Client, key(ns, cluster), &runv1alpha3.ClusterBootstrap{}, func(cb *runv1alpha3.ClusterBootstrap) error {
		c := cb.Status.Conditions.Get(typ)
		if c == nil || c.Status != corev1.ConditionTrue || c.Message != message {
			return fmt.Errorf("condition %s: %+v", typ, c)
		}
		return nil
	})
}

func gone(t *testing.T, c client.Client, k client.ObjectKey, o client.Object) {
	t.Helper()
	envtest.Eventually(t, 20*time.Second, fmt.Sprintf("%T %s gone", o, k), func() error {
		if err := c.Get(t.Context(), k, o); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}
