package source_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/source"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/status"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
	"github.com/slipway-dev/slipway/internal/tkg"
)

const ns = tkg.SystemNamespace

var (
	env  *envtest.Environment
	host string
)

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		e.OnStop(reg.Close)
		host = strings.TrimPrefix(reg.URL, "http://")
		if err := e.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			panic(err)
		}
		e.StartManager(func(mgr ctrl.Manager) error {
			compat := &source.Compatibility{Client: mgr.GetClient(), Namespace: ns}
			f := &source.Fetcher{Client: mgr.GetClient(), Compatibility: compat,
				CompatibilityImage: host + "/tkg/tkr-compatibility", TKRRepositoryImage: host + "/tkg/tkr-repository",
				InitialInterval: 300 * time.Millisecond, Interval: 500 * time.Millisecond}
			if err := f.SetupWithManager(mgr); err != nil {
				return err
			}
			if err := (&source.PackageReconciler{Client: mgr.GetClient(), Namespace: ns}).SetupWithManager(mgr); err != nil {
				return err
			}
			if err := (&source.CompatibilityReconciler{Client: mgr.GetClient(), Compatibility: compat}).SetupWithManager(mgr); err != nil {
				return err
			}
			return (&status.TKRReconciler{Client: mgr.GetClient(), Namespace: ns}).SetupWithManager(mgr)
		})
	}))
}

func push(t *testing.T, ref string, files map[string]string) string {
	t.Helper()
	if _, ok := files[".imgpkg/images.yml"]; !ok {
		files[".imgpkg/images.yml"] = "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\n"
	}
	digest, err := bundle.Push(testfiles.WriteTree(t, files), ref)
	if err != nil {
		t.Fatal(err)
	}
	return digest
}

func pushCompatibility(t *testing.T, tag, tkgVersion string, tkrs ...string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "version: v1\nmanagementClusterVersions:\n- version: %s\n  supportedKubernetesVersions:\n", tkgVersion)
	for _, v := range tkrs {
		fmt.Fprintf(&b, "  - %s\n", v)
	}
	push(t, host+"/tkg/tkr-compatibility:"+tag, map[string]string{"tkr-compatibility.yaml": b.String()})
}

// pushRelease pushes a TKR bundle for a release and the TKR package repository tag that names it.
func pushRelease(t *testing.T, version, k8s string, withOSImage bool) {
	t.Helper()
	name := strings.ReplaceAll(version, "+", "---")
	image := "ubuntu-" + name
	content := fmt.Sprintf(`apiVersion: run.tanzu.vmware.com/v1alpha3
kind: TanzuKubernetesRelease
metadata:
  name: %[1]s
spec:
  version: %[2]s
  kubernetes:
    version: %[3]s
    imageRepository: projects.registry.vmware.com/tkg
  osImages:
  - name: %[4]s
  bootstrapPackages:
  - name: antrea.tanzu.vmware.com.1.0.0
---
apiVersion: run.tanzu.vmware.com/v1alpha3
kind: ClusterBootstrapTemplate
metadata:
  name: %[1]s
spec:
  kapp:
    refName: kapp-controller.tanzu.vmware.com.1.0.0
  cni:
    refName: antrea.tanzu.vmware.com.1.0.0
---
apiVersion: data.packaging.carvel.dev/v1alpha1
kind: Package
metadata:
  name: antrea.tanzu.vmware.com.1.0.0
spec:
  refName: antrea.tanzu.vmware.com
  version: 1.0.0
  template:
    spec:
      fetch:
      - imgpkgBundle:
          image: example.com/antrea:1.0.0
      template:
      - ytt: {}
      deploy:
      - kapp: {}
`, name, version, k8s, image)
	if withOSImage {
		content += fmt.Sprintf(`---
apiVersion: run.tanzu.vmware.com/v1alpha3
kind: OSImage
metadata:
  name: %s
spec:
  kubernetesVersion: %s
  os: {type: linux, name: ubuntu, version: "2004", arch: amd64}
  image:
    type: ova
    ref: {name: %s}
`, image, k8s, image)
	}
	tkrBundle := push(t, host+"/tkg/tkr-"+strings.ReplaceAll(version, "+", "_"), map[string]string{"config/tkr.yaml": content})
	pkg := fmt.Sprintf(`apiVersion: data.packaging.carvel.dev/v1alpha1
kind: Package
metadata:
  name: tkr.tanzu.vmware.com.%[1]s
  labels:
    run.tanzu.vmware.com/tkr-package: ""
spec:
  refName: tkr.tanzu.vmware.com
  version: %[2]s
  template:
    spec:
      fetch:
      - imgpkgBundle:
          image: %[3]s
      template:
      - ytt:
          paths: [config/]
      deploy:
      - kapp: {}
`, strings.ReplaceAll(version, "+", "--"), version, tkrBundle)
	push(t, host+"/tkg/tkr-repository:"+strings.ReplaceAll(version, "+", "_"), map[string]string{
		"packages/tkr.tanzu.vmware.com/" + version + ".yml": pkg,
	})
}

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	envtest.Eventually(t, 30*time.Second, what, f)
}

// tkrState returns a release's conditions and labels as one line.
func tkrState(t *testing.T, name string) (string, error) {
	got := &runv1alpha3.TanzuKubernetesRelease{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, got); err != nil {
		return "", err
	}
	var parts []string
	for _, c := range []string{runv1alpha3.ConditionCompatible, runv1alpha3.ConditionValid, runv1alpha3.ConditionReady} {
		cond := got.Status.Conditions.Get(c)
		if cond == nil {
			parts = append(parts, c+"=?")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%s", c, cond.Status))
	}
	for _, l := range []string{runv1alpha3.LabelIncompatible, runv1alpha3.LabelInvalid, "v1", got.Name} {
		if _, ok := got.Labels[l]; ok {
			parts = append(parts, "label:"+l)
		}
	}
	return strings.Join(parts, " "), nil
}

func expectState(t *testing.T, name, want string) {
	t.Helper()
	eventually(t, name+" state", func() error {
		got, err := tkrState(t, name)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("got %q, want %q", got, want)
		}
		return nil
	})
}

// expectEvent waits for an events.k8s.io Event of the reason about the release whose note holds
// the text.
func expectEvent(t *testing.T, release, typ, reason, text string) {
	t.Helper()
	envtest.ExpectEvent(t, env.Client, "", release, typ, reason, func(n string) bool { return strings.Contains(n, text) })
}

func TestCatalogue(t *testing.T) {
	ctx := t.Context()
	const (
		v134 = "v1.34.3+vmware.1-tkg.1"
		v135 = "v1.35.4+vmware.1-tkg.1"
		n134 = "v1.34.3---vmware.1-tkg.1"
		n135 = "v1.35.4---vmware.1-tkg.1"
	)
	mgmt := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mgmt",
		Labels:      map[string]string{tkg.LabelManagementCluster: ""},
		Annotations: map[string]string{tkg.AnnotationTKGVersion: "v2.5.2"}}}
	mgmt.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane", Name: "mgmt"}
	if err := env.Client.Create(ctx, mgmt); err != nil {
		t.Fatal(err)
	}
	pushCompatibility(t, "v1", "v2.5.2", v134)
	pushRelease(t, v134, "v1.34.3+vmware.1", true)
	pushRelease(t, v135, "v1.35.4+vmware.1", true)

	t.Run("compatible releases are installed, valid and ready", func(t *testing.T) {
		expectState(t, n134, "Compatible=True Valid=True Ready=True label:v1 label:"+n134)
		for _, o := range []client.Object{&runv1alpha3.OSImage{ObjectMeta: metav1.ObjectMeta{Name: "ubuntu-" + n134}},
			&runv1alpha3.ClusterBootstrapTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n134}}} {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				t.Fatal(err)
			}
		}
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: source.CompatibilityConfigMap}, cm); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(cm.BinaryData[source.CompatibilityKey]), v134) {
			t.Fatalf("compatibility metadata %q", cm.BinaryData[source.CompatibilityKey])
		}
		// The release outside the compatibility metadata is not fetched.
		if err := env.Client.Get(ctx, client.ObjectKey{Name: n135}, &runv1alpha3.TanzuKubernetesRelease{}); err == nil {
			t.Fatalf("%s installed although incompatible", n135)
		}
		// Converged, nothing the source wrote is written again while the fetcher reads the
		// catalogue every 500ms.
		still := []client.Object{&runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: n134}},
			&runv1alpha3.OSImage{ObjectMeta: metav1.ObjectMeta{Name: "ubuntu-" + n134}},
			&runv1alpha3.ClusterBootstrapTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n134}}, cm}
		packages := &datapkgingv1alpha1.PackageList{}
		if err := env.Client.List(ctx, packages, client.InNamespace(ns)); err != nil || len(packages.Items) == 0 {
			t.Fatalf("the TKR Packages: %d (%v)", len(packages.Items), err)
		}
		for i := range packages.Items {
			still = append(still, &packages.Items[i])
		}
		envtest.ExpectStill(t, 3*time.Second, envtest.On(env.Client, still...))
	})

	t.Run("a new compatibility tag brings a new release", func(t *testing.T) {
		pushCompatibility(t, "v2", "v2.5.2", v134, v135)
		expectState(t, n135, "Compatible=True Valid=True Ready=True label:v1 label:"+n135)
	})

	t.Run("compatibility follows TKGVERSION", func(t *testing.T) {
		patch := client.MergeFrom(mgmt.DeepCopy())
		mgmt.Annotations[tkg.AnnotationTKGVersion] = "v2.6.0"
		if err := env.Client.Patch(ctx, mgmt, patch); err != nil {
			t.Fatal(err)
		}
		expectState(t, n134, "Compatible=False Valid=True Ready=False label:incompatible label:v1 label:"+n134)
		got := &runv1alpha3.TanzuKubernetesRelease{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: n134}, got); err != nil {
			t.Fatal(err)
		}
		if msg := got.Status.Conditions.Get(runv1alpha3.ConditionCompatible).Message; !strings.Contains(msg, "no entry for TKG v2.6.0") {
			t.Fatalf("Compatible message %q does not say why", msg)
		}
		expectEvent(t, n134, corev1.EventTypeWarning, source.ReasonIncompatible, "no entry for TKG v2.6.0")
	})

	t.Run("additional-compatible-tkrs ConfigMaps add releases", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "extra", Labels: map[string]string{source.LabelAdditionalTKRs: ""}},
			Data: map[string]string{source.AdditionalTKRsKey: "- " + v134 + "\n"}}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		expectState(t, n134, "Compatible=True Valid=True Ready=True label:v1 label:"+n134)
		expectState(t, n135, "Compatible=False Valid=True Ready=False label:incompatible label:v1 label:"+n135)
		expectEvent(t, n134, corev1.EventTypeNormal, source.ReasonCompatible, "compatible with this management cluster again")
		expectEvent(t, n134, corev1.EventTypeNormal, status.ReasonReleaseReady, "Release "+v134+" is Ready")
		if err := env.Client.Delete(ctx, cm); err != nil {
			t.Fatal(err)
		}
		expectState(t, n134, "Compatible=False Valid=True Ready=False label:incompatible label:v1 label:"+n134)
	})

	t.Run("a release without its OSImage is invalid", func(t *testing.T) {
		patch := client.MergeFrom(mgmt.DeepCopy())
		mgmt.Annotations[tkg.AnnotationTKGVersion] = "v2.5.2"
		if err := env.Client.Patch(ctx, mgmt, patch); err != nil {
			t.Fatal(err)
		}
		const v136 = "v1.36.0+vmware.1-tkg.1"
		pushCompatibility(t, "v3", "v2.5.2", v134, v135, v136)
		pushRelease(t, v136, "v1.36.0+vmware.1", false)
		n136 := "v1.36.0---vmware.1-tkg.1"
		expectState(t, n136, "Compatible=True Valid=False Ready=False label:invalid label:v1 label:"+n136)
		got := &runv1alpha3.TanzuKubernetesRelease{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: n136}, got); err != nil {
			t.Fatal(err)
		}
		valid := got.Status.Conditions.Get(runv1alpha3.ConditionValid)
		if valid.Reason != status.ReasonMissingOSImage || !strings.Contains(valid.Message, "ubuntu-"+n136) {
			t.Fatalf("Valid %+v", valid)
		}
		ready := got.Status.Conditions.Get(runv1alpha3.ConditionReady)
		if ready.Reason != status.ReasonMissingOSImage {
			t.Fatalf("Ready %+v", ready)
		}
		expectEvent(t, n136, corev1.EventTypeWarning, status.ReasonMissingOSImage, "Release "+v136+" is not valid: OSImage \"ubuntu-"+n136+"\" is missing")
	})

	t.Run("a TKR Package that cannot be fetched says why", func(t *testing.T) {
		pkg := &datapkgingv1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tkr.tanzu.vmware.com.9.9.9",
			Labels: map[string]string{tkg.LabelTKRPackage: ""}},
			Spec: datapkgingv1alpha1.PackageSpec{RefName: "tkr.tanzu.vmware.com", Version: "9.9.9",
				Template: datapkgingv1alpha1.AppTemplateSpec{Spec: &kappctrlv1alpha1.AppSpec{
					Fetch: []kappctrlv1alpha1.AppFetch{{ImgpkgBundle: &kappctrlv1alpha1.AppFetchImgpkgBundle{Image: host + "/tkg/nothing:v9.9.9"}}}}}}}
		if err := env.Client.Create(ctx, pkg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pkg) })
		note := envtest.ExpectEvent(t, env.Client, ns, pkg.Name, corev1.EventTypeWarning, source.ReasonTKRPackageInstallFailed, nil)
		if !strings.HasPrefix(note, "Failed to install release 9.9.9: ") || !strings.Contains(note, "nothing") {
			t.Errorf("the Warning of a Package whose bundle is missing says %q", note)
		}
	})

	t.Run("OSImages are labelled for selectors", func(t *testing.T) {
		eventually(t, "OSImage labels", func() error {
			o := &runv1alpha3.OSImage{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: "ubuntu-" + n135}, o); err != nil {
				return err
			}
			for _, l := range []string{"os-name", "os-version", "image-type", "v1.35", "v1.35.4---vmware.1"} {
				if _, ok := o.Labels[l]; !ok {
					return fmt.Errorf("label %s missing: %v", l, slices.Sorted(maps.Keys(o.Labels)))
				}
			}
			return nil
		})
	})
}
