package packageinstall_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// manyObjectsPackage renders n ConfigMaps, named after the install's "prefix" value, from one ytt
// loop.
func manyObjectsPackage(namespace, refName string, n int) *datapkgingv1alpha1.Package {
	config := fmt.Sprintf(`#@ load("@ytt:data", "data")
#@ for i in range(%d):
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: #@ "{}-{}".format(data.values.prefix, i)
data:
  index: #@ str(i)
#@ end
`, n)
	schema := "#@data/values-schema\n---\nprefix: object\n"
	return &datapkgingv1alpha1.Package{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: refName + ".1.0.0"},
		Spec: datapkgingv1alpha1.PackageSpec{
			RefName: refName, Version: "1.0.0",
			Template: datapkgingv1alpha1.AppTemplateSpec{Spec: &kappctrlv1alpha1.AppSpec{
				Fetch:    []kappctrlv1alpha1.AppFetch{{Inline: &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{"config.yml": config, "schema.yml": schema}}}},
				Template: []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{}}},
				Deploy:   []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{}}},
			}},
		},
	}
}

func waitSucceeded(b *testing.B, keys []client.ObjectKey) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for _, key := range keys {
		for {
			pi := &pkgingv1alpha1.PackageInstall{}
			if err := env.Client.Get(b.Context(), key, pi); err == nil && pi.Status.FriendlyDescription == "Reconcile succeeded" {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("PackageInstall %s did not succeed", key)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// BenchmarkInstall50ObjectPackage measures one PackageInstall of a package of 50 objects, from
// creation to ReconcileSucceeded.
func BenchmarkInstall50ObjectPackage(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		ns := fmt.Sprintf("bench-fifty-%d", i)
		b.StopTimer()
		setupB(b, ns)
		mustCreate(b, manyObjectsPackage(ns, "fifty.example.com", 50))
		b.StartTimer()
		pi := install(ns, ">=1.0.0")
		pi.Spec.PackageRef.RefName = "fifty.example.com"
		mustCreate(b, pi)
		waitSucceeded(b, []client.ObjectKey{client.ObjectKeyFromObject(pi)})
	}
}

// BenchmarkConverge100PackageInstalls measures 100 PackageInstalls created at once, until every
// one succeeded.
func BenchmarkConverge100PackageInstalls(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		ns := fmt.Sprintf("bench-hundred-%d", i)
		b.StopTimer()
		setupB(b, ns)
		mustCreate(b, manyObjectsPackage(ns, "one.example.com", 1))
		for j := 0; j < 100; j++ {
			// Each install names its object apart.
			mustCreate(b, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("values-%03d", j)},
				StringData: map[string]string{"values.yml": fmt.Sprintf("prefix: install-%03d\n", j)}})
		}
		b.StartTimer()
		var keys []client.ObjectKey
		for j := 0; j < 100; j++ {
			pi := install(ns, ">=1.0.0")
			pi.Name = fmt.Sprintf("install-%03d", j)
			pi.Spec.PackageRef.RefName = "one.example.com"
			pi.Spec.Values = []pkgingv1alpha1.PackageInstallValues{{SecretRef: &pkgingv1alpha1.PackageInstallValuesSecretRef{Name: fmt.Sprintf("values-%03d", j)}}}
			mustCreate(b, pi)
			keys = append(keys, client.ObjectKeyFromObject(pi))
		}
		waitSucceeded(b, keys)
	}
}

func setupB(b *testing.B, ns string) {
	b.Helper()
	for _, o := range namespaceObjects(ns) {
		mustCreate(b, o)
	}
}

func mustCreate(b *testing.B, obj client.Object) {
	b.Helper()
	if err := env.Client.Create(b.Context(), obj); err != nil && !strings.Contains(err.Error(), "already exists") {
		b.Fatal(err)
	}
}
