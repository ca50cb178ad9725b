package packageinstall_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	vendirversions "github.com/vmware-tanzu/carvel-vendir/pkg/vendir/versions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/controllers/packaging/app"
	"github.com/slipway-dev/slipway/internal/controllers/packaging/packageinstall"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/tkg"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		e.StartManager(
			func(mgr ctrl.Manager) error {
				return (&app.Reconciler{Client: mgr.GetClient(), Config: e.Config}).SetupWithManager(mgr)
			},
			func(mgr ctrl.Manager) error {
				return (&packageinstall.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
			},
		)
	}))
}

// greeterPackage is a package whose configuration is one ConfigMap saying its version and the
// greeting of its values.
func greeterPackage(namespace, version string) *datapkgingv1alpha1.Package {
	config := `#@ load("@ytt:data", "data")
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: greeter
data:
  version: "` + version + `"
  greeting: #@ data.values.greeting
`
	schema := "#@data/values-schema\n---\ngreeting: hello\n"
	return &datapkgingv1alpha1.Package{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "greeter.example.com." + version},
		Spec: datapkgingv1alpha1.PackageSpec{
			RefName: "greeter.example.com",
			Version: version,
			Template: datapkgingv1alpha1.AppTemplateSpec{Spec: &kappctrlv1alpha1.AppSpec{
				Fetch:    []kappctrlv1alpha1.AppFetch{{Inline: &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{"config/config.yml": config, "config/schema.yml": schema}}}},
				Template: []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{Paths: []string{"config"}}}},
				Deploy:   []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{RawOptions: []string{"--wait-timeout=30s"}}}},
			}},
		},
	}
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(t.Context(), o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// namespaceObjects are a namespace with a service account that may install anything in it.
func namespaceObjects(ns string) []client.Object {
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tkg.PackageRepoGlobalNamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "installer"}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "installer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "installer", Namespace: ns}},
		},
	}
}

func setup(t *testing.T, ns string) {
	t.Helper()
	create(t, namespaceObjects(ns)...)
}

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	envtest.Eventually(t, 45*time.Second, what, f)
}

func greeter(ns string) (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "greeter"}, cm)
	return cm.Data, err
}

func install(ns, constraints string) *pkgingv1alpha1.PackageInstall {
	return &pkgingv1alpha1.PackageInstall{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "greeter"},
		Spec: pkgingv1alpha1.PackageInstallSpec{
			ServiceAccountName: "installer",
			PackageRef: &pkgingv1alpha1.PackageRef{RefName: "greeter.example.com",
				VersionSelection: &vendirversions.VersionSelectionSemver{Constraints: constraints}},
		},
	}
}

func TestPackageInstallLifecycle(t *testing.T) {
	ctx := t.Context()
	ns := "pkgi-lifecycle"
	setup(t, ns)
	// 1.0.0 and 1.1.0 are global; 2.0.0-rc.1 is a prerelease; 2.0.0 is local to the namespace.
	create(t,
		greeterPackage(tkg.PackageRepoGlobalNamespace, "1.0.0"),
		greeterPackage(tkg.PackageRepoGlobalNamespace, "1.1.0"),
		greeterPackage(tkg.PackageRepoGlobalNamespace, "2.0.0-rc.1"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "greeter-values"}, StringData: map[string]string{"values.yml": "greeting: hi\n"}},
	)
	pi := install(ns, ">=1.0.0 <2.0.0")
	pi.Spec.Values = []pkgingv1alpha1.PackageInstallValues{{SecretRef: &pkgingv1alpha1.PackageInstallValuesSecretRef{Name: "greeter-values"}}}
	create(t, pi)
	key := client.ObjectKeyFromObject(pi)
	eventually(t, "1.1.0 installed with the values", func() error {
		data, err := greeter(ns)
		if err != nil || data["version"] != "1.1.0" || data["greeting"] != "hi" {
			return fmt.Errorf("greeter %v %v", data, err)
		}
		return statusIs(key, "1.1.0", "Reconcile succeeded")
	})
	a := &kappctrlv1alpha1.App{}
	if err := env.Client.Get(ctx, key, a); err != nil {
		t.Fatal(err)
	}
	if a.Annotations[packageinstall.AnnotationPackageVersion] != "1.1.0" || !metav1.IsControlledBy(a, pi) {
		t.Errorf("App %s is not the install's: %v %v", a.Name, a.Annotations, a.OwnerReferences)
	}

	t.Run("a converged install stays still and said so in an Event", func(t *testing.T) {
		envtest.Eventually(t, 10*time.Second, "Event "+packageinstall.ReasonReconcileSucceeded, func() error {
			list := &eventsv1.EventList{}
			if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, e := range list.Items {
				if e.Regarding.Kind == "PackageInstall" && e.Regarding.Name == pi.Name && e.Reason == packageinstall.ReasonReconcileSucceeded &&
					strings.Contains(e.Note, "version 1.1.0") {
					return nil
				}
			}
			return fmt.Errorf("no %s Event naming version 1.1.0 among %d", packageinstall.ReasonReconcileSucceeded, len(list.Items))
		})
		// A Package of the same refName changing brings the install back: the pass must write
		// nothing.
		go func() {
			time.Sleep(500 * time.Millisecond)
			p := &datapkgingv1alpha1.Package{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: tkg.PackageRepoGlobalNamespace, Name: "greeter.example.com.1.0.0"}, p); err == nil {
				p.Labels = map[string]string{"touched": "yes"}
				_ = env.Client.Update(ctx, p)
			}
		}()
		envtest.ExpectStill(t, 3*time.Second, envtest.On(env.Client, pi.DeepCopy(), a.DeepCopy(),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: a.Name + ".app"}}))
	})

	t.Run("values change", func(t *testing.T) {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "greeter-values"}, s); err != nil {
			t.Fatal(err)
		}
		s.StringData = map[string]string{"values.yml": "greeting: hej\n"}
		if err := env.Client.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		eventually(t, "new greeting", func() error {
			if data, err := greeter(ns); err != nil || data["greeting"] != "hej" {
				return fmt.Errorf("greeter %v %v", data, err)
			}
			return nil
		})
	})

	t.Run("upgrade when the constraint allows a newer version", func(t *testing.T) {
		create(t, greeterPackage(ns, "2.0.0"))
		if err := env.Client.Get(ctx, key, pi); err != nil {
			t.Fatal(err)
		}
		pi.Spec.PackageRef.VersionSelection.Constraints = ">=2.0.0"
		if err := env.Client.Update(ctx, pi); err != nil {
			t.Fatal(err)
		}
		eventually(t, "2.0.0 installed", func() error {
			if data, err := greeter(ns); err != nil || data["version"] != "2.0.0" {
				return fmt.Errorf("greeter %v %v", data, err)
			}
			return statusIs(key, "2.0.0", "Reconcile succeeded")
		})
	})

	t.Run("a constraint nothing satisfies is a useful error", func(t *testing.T) {
		if err := env.Client.Get(ctx, key, pi); err != nil {
			t.Fatal(err)
		}
		pi.Spec.PackageRef.VersionSelection.Constraints = ">=3.0.0"
		if err := env.Client.Update(ctx, pi); err != nil {
			t.Fatal(err)
		}
		eventually(t, "failure", func() error {
			got := &pkgingv1alpha1.PackageInstall{}
			if err := env.Client.Get(ctx, key, got); err != nil {
				return err
			}
			msg := got.Status.UsefulErrorMessage
			if !strings.Contains(msg, `constraints ">=3.0.0"`) || !strings.Contains(msg, "1.0.0, 1.1.0, 2.0.0") {
				return fmt.Errorf("message %q", msg)
			}
			// What is installed stays installed.
			if got.Status.Version != "2.0.0" {
				return fmt.Errorf("version %q", got.Status.Version)
			}
			return nil
		})
	})

	t.Run("delete removes the App and what it deployed", func(t *testing.T) {
		if err := env.Client.Delete(ctx, pi); err != nil {
			t.Fatal(err)
		}
		eventually(t, "gone", func() error {
			if _, err := greeter(ns); !apierrors.IsNotFound(err) {
				return fmt.Errorf("ConfigMap still there: %v", err)
			}
			if err := env.Client.Get(ctx, key, &pkgingv1alpha1.PackageInstall{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("PackageInstall still there: %v", err)
			}
			return nil
		})
	})
}

func TestPackageInstallPrereleaseAndNoopDelete(t *testing.T) {
	ctx := t.Context()
	ns := "pkgi-noop"
	setup(t, ns)
	create(t, greeterPackage(tkg.PackageRepoGlobalNamespace, "2.0.0-rc.1"))
	// A constraint that is itself a prerelease selects prereleases.
	pi := install(ns, "2.0.0-rc.1")
	pi.Spec.NoopDelete = true
	create(t, pi)
	key := client.ObjectKeyFromObject(pi)
	eventually(t, "prerelease installed", func() error { return statusIs(key, "2.0.0-rc.1", "Reconcile succeeded") })
	if err := env.Client.Delete(ctx, pi); err != nil {
		t.Fatal(err)
	}
	eventually(t, "install gone", func() error {
		if err := env.Client.Get(ctx, key, &pkgingv1alpha1.PackageInstall{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("PackageInstall still there: %v", err)
		}
		return nil
	})
	if data, err := greeter(ns); err != nil || data["version"] != "2.0.0-rc.1" {
		t.Fatalf("noopDelete removed what was installed: %v %v", data, err)
	}
}

func statusIs(key client.ObjectKey, version, friendly string) error {
	pi := &pkgingv1alpha1.PackageInstall{}
	if err := env.Client.Get(context.Background(), key, pi); err != nil {
		return err
	}
	if pi.Status.Version != version || pi.Status.LastAttemptedVersion != version || pi.Status.FriendlyDescription != friendly {
		return fmt.Errorf("status version %q attempted %q friendly %q error %q", pi.Status.Version, pi.Status.LastAttemptedVersion, pi.Status.FriendlyDescription, pi.Status.UsefulErrorMessage)
	}
	return nil
}

// TestBadSyncPeriodIsRefused checks that a duration field the types cannot decode is refused at
// admission, with its field path, for each kind that has one: stored, it would make every
// typed list of the kind fail and stop every package.
func TestBadSyncPeriodIsRefused(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind string
		path             []string
	}{
		{"packaging.carvel.dev/v1alpha1", "PackageInstall", []string{"spec", "syncPeriod"}},
		{"packaging.carvel.dev/v1alpha1", "PackageRepository", []string{"spec", "syncPeriod"}},
		{"kappctrl.k14s.io/v1alpha1", "App", []string{"spec", "syncPeriod"}},
		{"data.packaging.carvel.dev/v1alpha1", "Package", []string{"spec", "template", "spec", "syncPeriod"}},
	} {
		for value, ok := range map[string]bool{"abc": false, "10": false, "1h30m": true, "1.5s": true, "45s": true} {
			o := &unstructured.Unstructured{}
			o.SetAPIVersion(tc.apiVersion)
			o.SetKind(tc.kind)
			o.SetNamespace("default")
			o.SetName(strings.ToLower(tc.kind) + "-" + strings.NewReplacer(".", "-").Replace(value))
			if tc.kind == "PackageRepository" {
				_ = unstructured.SetNestedField(o.Object, "registry.example.com/repo:v1", "spec", "fetch", "imgpkgBundle", "image")
			}
			if tc.kind == "Package" {
				o.SetName("p.example.com.1.0.0-" + strings.NewReplacer(".", "-").Replace(value))
				_ = unstructured.SetNestedField(o.Object, "p.example.com", "spec", "refName")
				_ = unstructured.SetNestedField(o.Object, "1.0.0-"+strings.NewReplacer(".", "-").Replace(value), "spec", "version")
			}
			if err := unstructured.SetNestedField(o.Object, value, tc.path...); err != nil {
				t.Fatal(err)
			}
			err := env.Client.Create(t.Context(), o)
			field := strings.Join(tc.path, ".")
			switch {
			case ok && err != nil:
				t.Errorf("%s with %s %q refused: %v", tc.kind, field, value, err)
			case !ok && (err == nil || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), "must be a duration such as 30s")):
				t.Errorf("%s with %s %q: got %v, want a refusal naming %s", tc.kind, field, value, err, field)
			}
		}
	}
	// What was admitted decodes: a typed list of every kind works.
	for _, list := range []client.ObjectList{&pkgingv1alpha1.PackageInstallList{}, &pkgingv1alpha1.PackageRepositoryList{}, &kappctrlv1alpha1.AppList{}, &datapkgingv1alpha1.PackageList{}} {
		if err := env.Client.List(t.Context(), list); err != nil {
			t.Errorf("a typed list fails: %v", err)
		}
	}
}
