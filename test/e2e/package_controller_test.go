package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	vendirversions "github.com/vmware-tanzu/carvel-vendir/pkg/vendir/versions/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
)

// TestPackagesOnLocalCluster installs upstream kapp-controller from its package on a local cluster
// of real nodes, as management-cluster create does, and installs packages as a user of `slipway
// package` would: a package of a bundle in a package repository, through to a Deployment of an
// image built here; every verb of `slipway package`; then TKG's management packages from
// packages/, whose TKR service resolves Clusters in the cluster.
func TestPackagesOnLocalCluster(t *testing.T) {
	needRoot(t)
	registry, repo := pushPackages(t)
	pushNodeImages(t, registry)
	image := pushApplicationImage(t, registry)
	lc := createCluster(t, "e2e-pkg")
	run := packageCLI(t, lc, repo)
	waitForReadyPod(t, lc, "tkg-system", "app=kapp-controller")
	t.Run("a package of a bundle", func(t *testing.T) { checkPackageOfABundle(t, lc, registry, image) })
	t.Run("the package verbs", func(t *testing.T) { checkPackageVerbs(t, kubeconfigOf(t, lc), registry) })
	t.Run("the management packages and the TKR service", func(t *testing.T) {
		checkManagementPackagesAndTKRService(t, lc, run, registry, repo)
	})
}

// checkPackageOfABundle installs a package of an imgpkg bundle in a package repository, both
// pushed to the local registry at host, with values: kapp-controller fetches the
// repository and the bundle, renders the bundle's templates with the values, resolves image
// through the bundle's lock with kbld and deploys a Deployment of 2 replicas of it.
func checkPackageOfABundle(t *testing.T, lc *localCluster, host, image string) {
	ctx := t.Context()
	ref, err := name.ParseReference(image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	locked := ref.Context().Digest(desc.Digest.String()).String()
	pkgBundle, err := bundle.Push(testfiles.WriteTree(t, map[string]string{
		".imgpkg/images.yml": "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\nimages:\n- image: " + locked + "\n  annotations:\n    kbld.carvel.dev/id: web:latest\n",
		"config/schema.yml":  "#@data/values-schema\n---\nreplicas: 1\n",
		"config/web.yml": "#@ load(\"@ytt:data\", \"data\")\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\nspec:\n  replicas: #@ data.values.replicas\n" +
			"  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: web:latest\n        ports: [{containerPort: 8080}]\n",
	}), host+"/packages/web:1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	repoBundle, err := bundle.Push(testfiles.WriteTree(t, map[string]string{
		".imgpkg/images.yml": "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\n",
		"packages/web.example.com/1.0.0.yml": fmt.Sprintf(`apiVersion: data.packaging.carvel.dev/v1alpha1
kind: Package
metadata:
  name: web.example.com.1.0.0
spec:
  refName: web.example.com
  version: 1.0.0
  template:
    spec:
      fetch:
      - imgpkgBundle:
          image: %s
      template:
      - ytt:
          paths: [config/]
      - kbld:
          paths: ["-", .imgpkg/images.yml]
      deploy:
      - kapp:
          rawOptions: [--wait-timeout=60s]
`, pkgBundle),
	}), host+"/packages/repo:v1")
	if err != nil {
		t.Fatal(err)
	}

	repo := &pkgingv1alpha1.PackageRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tanzu-package-repo-global", Name: "repo"},
		Spec:       pkgingv1alpha1.PackageRepositorySpec{Fetch: &pkgingv1alpha1.PackageRepositoryFetch{ImgpkgBundle: &kappctrlv1alpha1.AppFetchImgpkgBundle{Image: repoBundle}}},
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "installer"}}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "installer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "installer", Namespace: "default"}},
	}
	values := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-values"}, StringData: map[string]string{"values.yml": "replicas: 2\n"}}
	pi := &pkgingv1alpha1.PackageInstall{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: pkgingv1alpha1.PackageInstallSpec{
			ServiceAccountName: "installer",
			PackageRef: &pkgingv1alpha1.PackageRef{RefName: "web.example.com",
				VersionSelection: &vendirversions.VersionSelectionSemver{Constraints: ">=1.0.0"}},
			Values: []pkgingv1alpha1.PackageInstallValues{{SecretRef: &pkgingv1alpha1.PackageInstallValuesSecretRef{Name: "web-values"}}},
		},
	}
	for _, obj := range []client.Object{repo, sa, crb, values, pi} {
		eventually(t, 30*time.Second, "create "+obj.GetName(), func() error { return lc.client.Create(ctx, obj) })
	}
	start := time.Now()
	eventually(t, 2*time.Minute, "PackageInstall succeeded", func() error {
		got := &pkgingv1alpha1.PackageInstall{}
		if err := lc.client.Get(ctx, client.ObjectKeyFromObject(pi), got); err != nil {
			return err
		}
		if got.Status.Version != "1.0.0" || got.Status.FriendlyDescription != "Reconcile succeeded" {
			return fmt.Errorf("%q %q", got.Status.FriendlyDescription, got.Status.UsefulErrorMessage)
		}
		return nil
	})
	t.Logf("package installed %s after the PackageInstall", time.Since(start).Round(100*time.Millisecond))
	deploy := &appsv1.Deployment{}
	if err := lc.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, deploy); err != nil {
		t.Fatal(err)
	}
	if deploy.Status.AvailableReplicas != 2 {
		t.Errorf("the values were not applied or the Deployment is not available: %d replicas available", deploy.Status.AvailableReplicas)
	}
	if got := deploy.Spec.Template.Spec.Containers[0].Image; got != locked {
		t.Errorf("kbld did not resolve the image from the bundle's images.yml: %s, want %s", got, locked)
	}
}
