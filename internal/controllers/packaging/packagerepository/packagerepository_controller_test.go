package packagerepository_test

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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/controllers/packaging/packagerepository"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
	"github.com/slipway-dev/slipway/internal/test/testregistry"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		e.StartManager(func(mgr ctrl.Manager) error {
			return (&packagerepository.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
		})
	}))
}

func pkgYAML(refName, version string) string {
	return fmt.Sprintf(`apiVersion: data.packaging.carvel.dev/v1alpha1
kind: Package
metadata:
  name: %[1]s.%[2]s
spec:
  refName: %[1]s
  version: %[2]s
  template:
    spec:
      fetch:
      - imgpkgBundle:
          image: registry.example.com/packages/%[1]s:%[2]s
      template:
      - ytt:
          paths: [config/]
      deploy:
      - kapp: {}
`, refName, version)
}

func metadataYAML(refName string) string {
	return fmt.Sprintf("apiVersion: data.packaging.carvel.dev/v1alpha1\nkind: PackageMetadata\nmetadata:\n  name: %[1]s\nspec:\n  displayName: %[1]s\n  shortDescription: test package\n", refName)
}

// pushRepo builds a repository bundle from files and pushes it.
func pushRepo(t *testing.T, registryHost, tag string, files map[string]string) string {
	t.Helper()
	files[".imgpkg/images.yml"] = "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\n"
	ref, err := bundle.Push(testfiles.WriteTree(t, files), registryHost+"/packages/repo:"+tag)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	envtest.Eventually(t, 45*time.Second, what, f)
}

func packages(ns string) ([]string, error) {
	list := &datapkgingv1alpha1.PackageList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var names []string
	for _, p := range list.Items {
		if p.Annotations[packagerepository.AnnotationRepositoryRef] != ns+"/repo" {
			return nil, fmt.Errorf("package %s lacks its repository annotation: %v", p.Name, p.Annotations)
		}
		names = append(names, p.Name)
	}
	return names, nil
}

func TestPackageRepositoryFromBundle(t *testing.T) {
	ctx := t.Context()
	host := testregistry.Start(t)
	ns := "repo-bundle"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	v1 := pushRepo(t, host, "v1", map[string]string{
		"packages/a.example.com/metadata.yml": metadataYAML("a.example.com"),
		"packages/a.example.com/1.0.0.yml":    pkgYAML("a.example.com", "1.0.0"),
		"packages/b.example.com/1.0.0.yml":    pkgYAML("b.example.com", "1.0.0"),
	})
	repo := &pkgingv1alpha1.PackageRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "repo"},
		Spec: pkgingv1alpha1.PackageRepositorySpec{Fetch: &pkgingv1alpha1.PackageRepositoryFetch{
			ImgpkgBundle: &kappctrlv1alpha1.AppFetchImgpkgBundle{Image: v1},
		}},
	}
	if err := env.Client.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	eventually(t, "packages of v1", func() error {
		names, err := packages(ns)
		if err != nil || strings.Join(names, ",") != "a.example.com.1.0.0,b.example.com.1.0.0" {
			got := &pkgingv1alpha1.PackageRepository{}
			_ = env.Client.Get(ctx, client.ObjectKeyFromObject(repo), got)
			return fmt.Errorf("packages %v %v; status %q %q", names, err, got.Status.FriendlyDescription, got.Status.UsefulErrorMessage)
		}
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a.example.com"}, &datapkgingv1alpha1.PackageMetadata{})
	})
	eventually(t, "status", func() error {
		got := &pkgingv1alpha1.PackageRepository{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(repo), got); err != nil {
			return err
		}
		if got.Status.FriendlyDescription != "Reconcile succeeded" {
			return fmt.Errorf("status %q %q", got.Status.FriendlyDescription, got.Status.UsefulErrorMessage)
		}
		return nil
	})

	t.Run("a new revision adds and prunes packages", func(t *testing.T) {
		v2 := pushRepo(t, host, "v2", map[string]string{
			"packages/a.example.com/1.0.0.yml": pkgYAML("a.example.com", "1.0.0"),
			"packages/a.example.com/1.1.0.yml": pkgYAML("a.example.com", "1.1.0"),
		})
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(repo), repo); err != nil {
			t.Fatal(err)
		}
		repo.Spec.Fetch.ImgpkgBundle.Image = v2
		if err := env.Client.Update(ctx, repo); err != nil {
			t.Fatal(err)
		}
		eventually(t, "packages of v2", func() error {
			names, err := packages(ns)
			if err != nil || strings.Join(names, ",") != "a.example.com.1.0.0,a.example.com.1.1.0" {
				return fmt.Errorf("packages %v %v", names, err)
			}
			err = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a.example.com"}, &datapkgingv1alpha1.PackageMetadata{})
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("PackageMetadata not pruned: %v", err)
			}
			return nil
		})
	})

	t.Run("a repository holding other kinds fails with a useful error", func(t *testing.T) {
		bad := pushRepo(t, host, "bad", map[string]string{
			"packages/x.yml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sneaky\n",
		})
		r := &pkgingv1alpha1.PackageRepository{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
			Spec:       pkgingv1alpha1.PackageRepositorySpec{Fetch: &pkgingv1alpha1.PackageRepositoryFetch{ImgpkgBundle: &kappctrlv1alpha1.AppFetchImgpkgBundle{Image: bad}}},
		}
		if err := env.Client.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		eventually(t, "failure", func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(r), r); err != nil {
				return err
			}
			if !strings.Contains(r.Status.UsefulErrorMessage, "may only hold Package and PackageMetadata") {
				return fmt.Errorf("message %q", r.Status.UsefulErrorMessage)
			}
			return nil
		})
	})

	t.Run("deleting the repository removes its packages", func(t *testing.T) {
		if err := env.Client.Delete(ctx, repo); err != nil {
			t.Fatal(err)
		}
		eventually(t, "packages gone", func() error {
			if names, err := packages(ns); err != nil || len(names) > 0 {
				return fmt.Errorf("packages %v %v", names, err)
			}
			return nil
		})
	})
}
