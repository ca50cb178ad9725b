package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/test/testregistry"
)

// kappTable is one table of kapp's --json output.
type kappTable struct {
	Content string              `json:"Content"`
	Rows    []map[string]string `json:"Rows"`
}

// runKapp runs Carvel's kapp, built from hack/tools/carvel, against a cluster, and returns the
// rows of its JSON tables.
func runKapp(t *testing.T, kubeconfig string, args ...string) ([]kappTable, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kappBin, append(args, "--kubeconfig", kubeconfig, "--json", "--tty=false")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kapp %s: %w\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	var doc struct {
		Tables []kappTable `json:"Tables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("kapp %s printed no JSON: %w\n%s", strings.Join(args, " "), err, out)
	}
	return doc.Tables, nil
}

func kappRows(t *testing.T, kubeconfig string, args ...string) []map[string]string {
	t.Helper()
	tables, err := runKapp(t, kubeconfig, args...)
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, table := range tables {
		rows = append(rows, table.Rows...)
	}
	return rows
}

// checkKapp runs the real kapp on a bootstrap cluster: it lists every record slipway wrote,
// inspects an App's objects and its changes, and slipway takes over an app kapp deployed.
func checkKapp(t *testing.T, lc *localCluster) {
	ctx := t.Context()
	kubeconfig := kubeconfigOf(t, lc)

	// kapp list -A reads every record: each App's and each repository's.
	listed := map[string]bool{}
	for _, row := range kappRows(t, kubeconfig, "list", "-A") {
		listed[row["namespace"]+"/"+row["name"]] = true
	}
	apps := &kappctrlv1alpha1.AppList{}
	if err := lc.client.List(ctx, apps); err != nil {
		t.Fatal(err)
	}
	if len(apps.Items) < 10 {
		t.Fatalf("%d Apps on the bootstrap cluster", len(apps.Items))
	}
	for _, a := range apps.Items {
		if !listed[a.Namespace+"/"+a.Name+".app"] {
			t.Errorf("kapp list -A does not list App %s/%s's record %s.app: %v", a.Namespace, a.Name, a.Name, listed)
		}
	}
	if !listed["tkg-system/tanzu-management.pkgr"] || !listed["tkg-system/kapp-controller.app"] {
		t.Errorf("kapp list -A does not list kapp-controller's record: %v", listed)
	}

	// kapp inspect lists the objects the App's status names, and kapp app-change list its
	// deploys.
	a := &kappctrlv1alpha1.App{}
	if err := lc.client.Get(ctx, client.ObjectKey{Namespace: "tkg-system", Name: "tkr-service"}, a); err != nil {
		t.Fatal(err)
	}
	var inspected []string
	for _, row := range kappRows(t, kubeconfig, "inspect", "-a", "tkr-service.app", "-n", "tkg-system") {
		if row["owner"] == "kapp" {
			inspected = append(inspected, strings.TrimPrefix(row["namespace"], "(cluster)")+"/"+row["kind"]+"/"+row["name"])
		}
	}
	sort.Strings(inspected)
	if want := labelled(t, lc, a.Status.Deploy.KappDeployStatus.AssociatedResources); strings.Join(inspected, " ") != strings.Join(want, " ") {
		t.Errorf("kapp inspect -a tkr-service.app lists\n%v\nthe App's status names\n%v", inspected, want)
	}
	changes := kappRows(t, kubeconfig, "app-change", "list", "-a", "tkr-service.app", "-n", "tkg-system")
	if len(changes) == 0 || changes[len(changes)-1]["successful"] != "true" || !strings.HasPrefix(changes[0]["description"], "update: Op: ") {
		t.Errorf("kapp app-change list: %v", changes)
	}

	// An app kapp deployed under the name kapp-controller gave an App's kapp app before v0.4x
	// (m-ctrl) is taken over by the App m: the record moves to m.app, the object is updated in
	// place, and kapp still reads the record.
	ns := "kapp-adopt"
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: ns}},
		},
	} {
		if err := lc.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	manifest := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeting, namespace: "+ns+"}\ndata: {greeting: from-kapp}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runKapp(t, kubeconfig, "deploy", "-a", "m-ctrl", "-n", ns, "-f", manifest, "-y"); err != nil {
		t.Fatal(err)
	}
	before := &corev1.ConfigMap{}
	if err := lc.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "greeting"}, before); err != nil {
		t.Fatal(err)
	}
	m := inlineConfigMapApp(ns, "m", "greeting", "from-slipway")
	if err := lc.client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "App m takes over kapp's m-ctrl", func() error {
		cm := &corev1.ConfigMap{}
		if err := lc.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "greeting"}, cm); err != nil {
			return err
		}
		if cm.Data["greeting"] != "from-slipway" {
			_ = lc.client.Get(ctx, client.ObjectKeyFromObject(m), m)
			return fmt.Errorf("greeting %q; App: %s %s", cm.Data["greeting"], m.Status.FriendlyDescription, m.Status.UsefulErrorMessage)
		}
		if cm.UID != before.UID {
			return fmt.Errorf("the ConfigMap was re-created (uid %s, was %s), not updated in place", cm.UID, before.UID)
		}
		return nil
	})
	rows := kappRows(t, kubeconfig, "inspect", "-a", "m.app", "-n", ns)
	if len(rows) != 1 || rows[0]["name"] != "greeting" {
		t.Errorf("kapp inspect -a m.app after the take-over: %v", rows)
	}
	if changes := kappRows(t, kubeconfig, "app-change", "list", "-a", "m.app", "-n", ns); len(changes) != 2 {
		t.Errorf("kapp app-change list -a m.app: %d changes, want kapp's and slipway's: %v", len(changes), changes)
	}
	if err := lc.client.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "App m's delete removes kapp's object", func() error {
		for _, name := range []string{"greeting", "m.app", "m-ctrl"} {
			if err := lc.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("ConfigMap %s still there: %v", name, err)
			}
		}
		return nil
	})

	// kapp delete removes what slipway deployed, once its App is paused.
	k := inlineConfigMapApp(ns, "k", "deleted-by-kapp", "x")
	if err := lc.client.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "App k deployed", func() error {
		return lc.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "deleted-by-kapp"}, &corev1.ConfigMap{})
	})
	patch := client.MergeFrom(k.DeepCopy())
	k.Spec.Paused = true
	if err := lc.client.Patch(ctx, k, patch); err != nil {
		t.Fatal(err)
	}
	if _, err := runKapp(t, kubeconfig, "delete", "-a", "k.app", "-n", ns, "-y"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"deleted-by-kapp", "k.app"} {
		if err := lc.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			t.Errorf("kapp delete -a k.app left ConfigMap %s: %v", name, err)
		}
	}
	if err := lc.client.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "App k gone", func() error {
		if err := lc.client.Get(ctx, client.ObjectKeyFromObject(k), &kappctrlv1alpha1.App{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("App k still there: %v", err)
		}
		return nil
	})
}

// inlineConfigMapApp is an App deploying one ConfigMap with the deployer service account.
func inlineConfigMapApp(ns, name, cm, value string) *kappctrlv1alpha1.App {
	return &kappctrlv1alpha1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kappctrlv1alpha1.AppSpec{
			ServiceAccountName: "deployer",
			Fetch: []kappctrlv1alpha1.AppFetch{{Inline: &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{
				"config.yml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + cm + "}\ndata: {greeting: " + value + "}\n",
			}}}},
			Template: []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{Paths: []string{"config.yml"}}}},
			Deploy:   []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{}}},
		},
	}
}

// labelled lists namespace/kind/name of the objects carrying a status's label, of its kinds.
func labelled(t *testing.T, lc *localCluster, res kappctrlv1alpha1.AssociatedResources) []string {
	t.Helper()
	key, value, _ := strings.Cut(res.Label, "=")
	var out []string
	for _, gk := range res.GroupKinds {
		mapping, err := lc.client.RESTMapper().RESTMapping(schema.GroupKind{Group: gk.Group, Kind: gk.Kind})
		if err != nil {
			t.Fatal(err)
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(mapping.GroupVersionKind.GroupVersion().WithKind(gk.Kind + "List"))
		if err := lc.client.List(t.Context(), list, client.MatchingLabels{key: value}); err != nil {
			t.Fatal(err)
		}
		for _, o := range list.Items {
			out = append(out, o.GetNamespace()+"/"+o.GetKind()+"/"+o.GetName())
		}
	}
	sort.Strings(out)
	return out
}

// runImgpkg runs Carvel's imgpkg, built from hack/tools/carvel, and returns its output.
func runImgpkg(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, imgpkgBin, append(args, "--tty=false")...).CombinedOutput()
	if err != nil {
		t.Fatalf("imgpkg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// relocate copies the package repository with Carvel's imgpkg as a site without internet does,
// to a tarball and from it to a repository of another registry, checks that the copy's locks, the
// repository's and every package's, name the copy, and returns the copy's reference.
func relocate(t *testing.T, repo, registry string) string {
	dir := t.TempDir()
	tarball := filepath.Join(dir, "repo.tar")
	start := time.Now()
	out := runImgpkg(t, "copy", "-b", repo, "--to-tar", tarball, "--registry-insecure")
	toTar := time.Since(start)
	info, err := os.Stat(tarball)
	if err != nil {
		t.Fatal(err)
	}
	relocated := registry + "/relocated/slipway-repo"
	_, digest, _ := strings.Cut(repo, "@")
	start = time.Now()
	runImgpkg(t, "copy", "--tar", tarball, "--to-repo", relocated, "--registry-insecure")
	t.Logf("imgpkg copy -b --to-tar: %s, %d KiB; --tar --to-repo: %s\n%s", toTar.Round(time.Millisecond), info.Size()>>10,
		time.Since(start).Round(time.Millisecond), out)
	copied := relocated + "@" + digest

	// lockOf returns the images a bundle's lock names, each with the reference it was locked
	// for (kbld.carvel.dev/id).
	lockOf := func(ref string) map[string]string {
		pulled := filepath.Join(t.TempDir(), "bundle")
		runImgpkg(t, "pull", "-b", ref, "-o", pulled, "--registry-insecure")
		data, err := os.ReadFile(filepath.Join(pulled, ".imgpkg", "images.yml"))
		if err != nil {
			t.Fatal(err)
		}
		var lock struct {
			Images []struct {
				Image       string            `json:"image"`
				Annotations map[string]string `json:"annotations"`
			} `json:"images"`
		}
		if err := yaml.Unmarshal(data, &lock); err != nil {
			t.Fatal(err)
		}
		images := map[string]string{}
		for _, img := range lock.Images {
			images[img.Image] = img.Annotations["kbld.carvel.dev/id"]
		}
		return images
	}
	// The repository locks the package bundles and the provider repository's images.
	var packages []string
	providerImages := 0
	for img, id := range lockOf(copied) {
		if !strings.HasPrefix(img, relocated+"@sha256:") {
			t.Errorf("the relocated repository's lock names %s, not the copy", img)
		}
		if strings.Contains(id, "/packages/") {
			packages = append(packages, img)
		} else {
			providerImages++
		}
	}
	if len(packages) < 20 || providerImages < 8 {
		t.Fatalf("the relocated repository's lock names %d bundles and %d provider images", len(packages), providerImages)
	}
	images := 0
	for _, pkg := range packages {
		for img := range lockOf(pkg) {
			images++
			if !strings.HasPrefix(img, relocated+"@sha256:") {
				t.Errorf("the relocated bundle %s locks %s, not the copy", pkg, img)
			}
		}
	}
	if images < 20 {
		t.Errorf("the relocated package bundles lock %d images in all", images)
	}
	return copied
}

// siteCopy is a copy of everything `make packages` pushes, in another registry on this host,
// as a site without internet keeps one.
type siteCopy struct {
	// repository is TKG_CUSTOM_IMAGE_REPOSITORY: the registry and the path under it.
	repository string
	// registry is the copy's registry, host:port.
	registry string
}

// copyForASite relocates everything `make packages` pushed to registryAddr (the management
// package repository, the TKR compatibility metadata and every TKR repository) with imgpkg into
// another registry on this host, puts the Kubernetes images of versions beside them at the paths
// kubeadm asks for (as TKG's isolated-cluster upload-bundle does: TKR_DATA names the copy as the
// image repository), empties slipway's registry of all but what a real node boots from (its node
// image, as kind's), and sets TKG_CUSTOM_IMAGE_REPOSITORY to the copy for the rest of the test:
// every package, provider image and release must come from the copy.
func copyForASite(t *testing.T, registryAddr string, versions ...string) siteCopy {
	t.Helper()
	c := siteCopy{repository: testregistry.StartOnEveryAddress(t) + "/tkg"}
	c.registry, _, _ = strings.Cut(c.repository, "/")
	start := time.Now()
	bundles := []string{registryAddr + "/packages/slipway-repo:v0.1.0", registryAddr + "/packages/tkr-compatibility:v1"}
	for _, line := range strings.Fields(runImgpkg(t, "tag", "list", "-i", registryAddr+"/packages/tkr-repository", "--registry-insecure")) {
		if strings.HasPrefix(line, "v") {
			bundles = append(bundles, registryAddr+"/packages/tkr-repository:"+line)
		}
	}
	if len(bundles) != 4 {
		t.Fatalf("bundles to copy: %v", bundles)
	}
	for _, b := range bundles {
		repository, _, _ := strings.Cut(strings.TrimPrefix(b, registryAddr+"/packages/"), ":")
		runImgpkg(t, "copy", "-b", b, "--to-repo", c.repository+"/"+repository, "--registry-insecure")
	}
	pushNodeImages(t, c.registry, versions...)
	t.Logf("copied %d bundles (every bundle and image they lock) and the Kubernetes images to %s in %s", len(bundles), c.repository, time.Since(start).Round(time.Millisecond))
	keepOnlyNodeImages(t, versions...)
	t.Setenv("TKG_CUSTOM_IMAGE_REPOSITORY", c.repository)
	return c
}

// checkFromTheCopy checks that the management cluster name, made with TKG_CUSTOM_IMAGE_REPOSITORY
// naming the copy, runs from it: its nodes pull from the copy (its LocalCluster says so, and so
// does the local cluster its provider made), its PackageRepositories and both TKRs are the copy's,
// kubeadm pulled the control plane and kube-proxy from it (the resolver gave TKR_DATA the
// imageRepository variable's host, as TKG's does), and kapp-controller and every provider run
// from the copy's images, clusterctl's image override naming it.
func checkFromTheCopy(t *testing.T, mc client.Client, store cluster.Store, name string, c siteCopy) {
	t.Helper()
	ctx := t.Context()
	lcs := &infrav1.LocalClusterList{}
	if err := mc.List(ctx, lcs, client.InNamespace("tkg-system")); err != nil {
		t.Fatal(err)
	}
	if len(lcs.Items) != 1 || !slices.Equal(lcs.Items[0].Spec.HostRegistries, []string{c.registry}) {
		t.Errorf("the management cluster's LocalClusters: %+v; want one with hostRegistries [%s]", lcs.Items, c.registry)
	}
	if spec, err := store.Get(name); err != nil || !slices.Equal(spec.HostRegistries, []string{c.registry}) {
		t.Errorf("the management cluster's local cluster: %v, registries %v; want [%s]", err, spec, c.registry)
	}
	repos := &pkgingv1alpha1.PackageRepositoryList{}
	if err := mc.List(ctx, repos); err != nil {
		t.Fatal(err)
	}
	if len(repos.Items) == 0 {
		t.Error("the management cluster has no PackageRepository")
	}
	for _, r := range repos.Items {
		if r.Spec.Fetch == nil || r.Spec.Fetch.ImgpkgBundle == nil || !strings.HasPrefix(r.Spec.Fetch.ImgpkgBundle.Image, c.repository+"/") {
			t.Errorf("PackageRepository %s/%s does not read the copy: %+v", r.Namespace, r.Name, r.Spec.Fetch)
		}
	}
	for _, tkr := range []string{"v1.34.3---vmware.1-tkg.1", "v1.35.4---vmware.1-tkg.1"} {
		if err := mc.Get(ctx, client.ObjectKey{Name: tkr}, &runv1alpha3.TanzuKubernetesRelease{}); err != nil {
			t.Errorf("TKR %s from the copy: %v", tkr, err)
		}
	}
	kubeadmConfig := &corev1.ConfigMap{}
	if err := mc.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "kubeadm-config"}, kubeadmConfig); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(kubeadmConfig.Data["ClusterConfiguration"], "imageRepository: "+c.repository+"\n") {
		t.Errorf("kubeadm's ClusterConfiguration does not name the copy %s:\n%s", c.repository, kubeadmConfig.Data["ClusterConfiguration"])
	}
	kubeProxy := &appsv1.DaemonSet{}
	if err := mc.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "kube-proxy"}, kubeProxy); err != nil {
		t.Fatal(err)
	}
	if image := kubeProxy.Spec.Template.Spec.Containers[0].Image; !strings.HasPrefix(image, c.repository+"/kube-proxy:") {
		t.Errorf("kube-proxy runs %s, not the copy's", image)
	}
	pods := &corev1.PodList{}
	if err := mc.List(ctx, pods, client.InNamespace("tkg-system"), client.MatchingLabels{"app": "kapp-controller"}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || !strings.HasPrefix(pods.Items[0].Spec.Containers[0].Image, c.repository+"/slipway-repo@sha256:") {
		t.Errorf("kapp-controller's pod: %+v", pods.Items)
	}
	deployments := &appsv1.DeploymentList{}
	if err := mc.List(ctx, deployments, client.HasLabels{"cluster.x-k8s.io/provider"}); err != nil {
		t.Fatal(err)
	}
	if len(deployments.Items) < 5 {
		t.Errorf("%d provider Deployments", len(deployments.Items))
	}
	for _, d := range deployments.Items {
		image := d.Spec.Template.Spec.Containers[0].Image
		if !strings.HasPrefix(image, c.repository+"/slipway-repo:") || !strings.Contains(image, "@sha256:") || d.Status.AvailableReplicas == 0 {
			t.Errorf("Deployment %s/%s runs %s (%d available), not the copy's image", d.Namespace, d.Name, image, d.Status.AvailableReplicas)
		}
	}
}

// checkPodsFromTheCopy checks that the pods on the nodes not in before run, and that one at
// least runs an image of the copy: a node the management cluster's own provider made pulls from
// it too.
func checkPodsFromTheCopy(t *testing.T, mc client.Client, before *corev1.NodeList, c siteCopy) {
	t.Helper()
	eventually(t, 3*time.Minute, "the new worker's pods running from the copy", func() error {
		pods := &corev1.PodList{}
		if err := mc.List(t.Context(), pods); err != nil {
			return err
		}
		fromCopy := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" || slices.ContainsFunc(before.Items, func(n corev1.Node) bool { return n.Name == p.Spec.NodeName }) {
				continue
			}
			if p.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("pod %s/%s on the new worker %s is %s", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase)
			}
			if strings.HasPrefix(p.Spec.Containers[0].Image, c.repository+"/") {
				fromCopy++
			}
		}
		if fromCopy == 0 {
			return errors.New("no pod on the new worker runs an image of the copy")
		}
		return nil
	})
}
