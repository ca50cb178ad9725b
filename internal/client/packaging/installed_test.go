package packaging

import (
	"context"
	"errors"
	"strings"
	"testing"

	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// TestInstalledCreateLeavesNothingWhenItFails checks that a refused install writes nothing (not
// even the namespace --create-namespace asks for) and that one failing half-way removes what it
// wrote: the namespace, the service account, its cluster role and binding, the values Secret.
func TestInstalledCreateLeavesNothingWhenItFails(t *testing.T) {
	pkg := &datapkgingv1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: "tanzu-package-repo-global", Name: "greeter.example.com.1.0.0"},
		Spec: datapkgingv1alpha1.PackageSpec{RefName: "greeter.example.com", Version: "1.0.0"}}
	o := InstallOptions{Name: "greeter", Namespace: "apps", PackageName: "greeter.example.com", Version: "1.0.0", CreateNamespace: true, Values: []byte("a: b\n")}
	count := func(t *testing.T, c client.Client) int {
		t.Helper()
		n := 0
		for _, list := range []client.ObjectList{&corev1.NamespaceList{}, &corev1.ServiceAccountList{}, &corev1.SecretList{},
			&rbacv1.ClusterRoleList{}, &rbacv1.ClusterRoleBindingList{}, &pkgingv1alpha1.PackageInstallList{}} {
			if err := c.List(t.Context(), list); err != nil {
				t.Fatal(err)
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				t.Fatal(err)
			}
			n += len(items)
		}
		return n
	}

	t.Run("refused before writing", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
		pc := &Client{C: c, Progress: progress.ForWriter(&strings.Builder{})}
		if err := pc.InstalledCreate(t.Context(), o); err == nil || !strings.Contains(err.Error(), "is not available") {
			t.Fatalf("got %v", err)
		}
		if n := count(t, c); n != 0 {
			t.Errorf("a refused install wrote %d objects", n)
		}
	})

	t.Run("a failed write removes what was written", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(pkg).WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if _, ok := obj.(*pkgingv1alpha1.PackageInstall); ok {
					return errors.New("the API server refused it")
				}
				return c.Create(ctx, obj, opts...)
			},
		}).Build()
		pc := &Client{C: c, Progress: progress.ForWriter(&strings.Builder{})}
		err := pc.InstalledCreate(t.Context(), o)
		if err == nil || !strings.Contains(err.Error(), "the API server refused it") {
			t.Fatalf("got %v", err)
		}
		if n := count(t, c); n != 0 {
			t.Errorf("the failed install left %d objects", n)
		}
	})
}
