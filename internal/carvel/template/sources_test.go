package template_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/assets"
	bundlepkg "github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/carvel/deploy"
	"github.com/slipway-dev/slipway/internal/carvel/template"
	"github.com/slipway-dev/slipway/internal/controllers/propagation"
	"github.com/slipway-dev/slipway/internal/test/packagesource"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
)

// TestPackageSourcesRender renders every package source in packages/ with its default values,
// through the templates its Package declares, and checks its Package and PackageMetadata decode
// strictly.
func TestPackageSourcesRender(t *testing.T) {
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join(root, "packages", "*", "*", "bundle"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no package sources: %v", err)
	}
	for _, bundle := range dirs {
		versionDir := filepath.Dir(bundle)
		t.Run(strings.TrimPrefix(versionDir, root+"/packages/"), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(versionDir, "package.yml"))
			if err != nil {
				t.Fatal(err)
			}
			pkg := &datapkgingv1alpha1.Package{}
			if err := yaml.UnmarshalStrict(data, pkg); err != nil {
				t.Fatalf("package.yml: %v", err)
			}
			if pkg.Spec.RefName != filepath.Base(filepath.Dir(versionDir)) || !strings.HasPrefix(pkg.Spec.Version, filepath.Base(versionDir)) {
				t.Errorf("package.yml says %s %s, its directory %s", pkg.Spec.RefName, pkg.Spec.Version, versionDir)
			}
			// kapp-controller's aggregated API refuses any other name.
			if want := pkg.Spec.RefName + "." + pkg.Spec.Version; pkg.Name != want {
				t.Errorf("Package is named %s, want %s", pkg.Name, want)
			}
			meta, err := os.ReadFile(filepath.Join(filepath.Dir(versionDir), "metadata.yml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.UnmarshalStrict(meta, &datapkgingv1alpha1.PackageMetadata{}); err != nil {
				t.Fatalf("metadata.yml: %v", err)
			}
			// Render what the pushed bundle holds: its files with symbolic links followed.
			files, err := bundlepkg.Files(bundle)
			if err != nil {
				t.Fatal(err)
			}
			tree := map[string]string{}
			for p, data := range files {
				tree[p] = string(data)
			}
			out, err := template.Template(t.Context(), nil, "default", pkg.Spec.Template.Spec.Template, testfiles.WriteTree(t, tree))
			if err != nil {
				t.Fatalf("rendering with default values: %v", err)
			}
			if len(strings.TrimSpace(string(out))) == 0 {
				t.Fatal("renders nothing")
			}
			// Every image the configuration names is resolved by the bundle's lock.
			for _, line := range strings.Split(string(out), "\n") {
				if img, ok := strings.CutPrefix(strings.TrimSpace(line), "image: "); ok && !strings.Contains(img, "/") {
					t.Errorf("image %s is not resolved by .imgpkg/images.yml", img)
				}
			}
			objs, err := deploy.Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			checkRoleRefs(t, objs)
			checkNoObjectTwice(t, objs)
		})
	}
}

// checkRoleRefs checks that every binding to a ClusterRole names one the package holds (a
// component's is generated from its RBAC markers by make generate) or one Kubernetes defines.
func checkRoleRefs(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	roles := map[string]bool{"cluster-admin": true}
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" {
			roles[o.GetName()] = true
		}
	}
	for _, o := range objs {
		kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
		name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
		if kind == "ClusterRole" && !roles[name] && !strings.HasPrefix(name, "system:") {
			t.Errorf("%s %s binds ClusterRole %s, which the package does not hold", o.GetKind(), o.GetName(), name)
		}
	}
}

// checkNoObjectTwice checks that the package renders each object once, by kapp's identity of an
// object (its API group, kind, namespace and name, whatever the version): kapp merges copies that
// are the same and refuses copies that differ ("Found resource … multiple times with different
// content"), and a copy is a slip either way.
func checkNoObjectTwice(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	seen := map[string]bool{}
	for _, o := range objs {
		key := fmt.Sprintf("%s %s/%s", o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName())
		if seen[key] {
			t.Errorf("the package renders %s twice", key)
		}
		seen[key] = true
	}
}

// TestMetaPackageCompatibleTKRs checks that the releases tkg-pkg is given are written to a
// ConfigMap the TKR source reads.
func TestMetaPackageCompatibleTKRs(t *testing.T) {
	out := renderMetaPackage(t, "additionalCompatibleTKRs: [v1.34.3+vmware.1-tkg.1, v1.35.4+vmware.1-tkg.1]\n")
	for _, want := range []string{"run.tanzu.vmware.com/additional-compatible-tkrs: \"\"", "tkrVersions: |", "- v1.34.3+vmware.1-tkg.1", "- v1.35.4+vmware.1-tkg.1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("tkg-pkg renders no %q:\n%s", want, out)
		}
	}
}

// TestMetaPackageClusterClassChild checks that tkg-pkg installs the children of the
// infrastructure provider it is given (none without one), that every child has a source in
// packages/, and that it refuses a provider it has none for.
func TestMetaPackageClusterClassChild(t *testing.T) {
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	providerChildren := []string{"tkg-clusterclass.tanzu.vmware.com", "tkg-clusterclass-vsphere.tanzu.vmware.com",
		"tkr-vsphere-resolver.tanzu.vmware.com", "ako-operator-v2.tanzu.vmware.com"}
	for _, tc := range []struct {
		provider, wantErr string
		want              []string
	}{
		{provider: ""},
		{provider: "local", want: providerChildren[:1]},
		{provider: "vsphere", want: providerChildren},
		{provider: "aws", wantErr: "infrastructureProvider"},
	} {
		t.Run("provider "+tc.provider, func(t *testing.T) {
			out, err := renderMetaPackageErr(t, fmt.Sprintf("infrastructureProvider: %q\n", tc.provider))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out), "additional-compatible-tkrs") {
				t.Errorf("a compatible-TKRs ConfigMap is rendered though none was given")
			}
			objs, err := deploy.Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			var children []string
			for _, o := range objs {
				if o.GetKind() != "PackageInstall" {
					continue
				}
				refName, _, _ := unstructured.NestedString(o.Object, "spec", "packageRef", "refName")
				children = append(children, refName)
				if _, err := os.Stat(filepath.Join(root, "packages", refName)); err != nil {
					t.Errorf("child %s has no source in packages/", refName)
				}
			}
			for _, c := range providerChildren {
				if got, want := slices.Contains(children, c), slices.Contains(tc.want, c); got != want {
					t.Errorf("child %s rendered: %v, want %v", c, got, want)
				}
			}
			if tc.provider != "" && !strings.Contains(string(out), "infrastructureProvider: "+tc.provider) {
				t.Errorf("tkg-clusterclass is not told the provider %s:\n%s", tc.provider, out)
			}
		})
	}
}

// renderMetaPackage renders tkg-pkg's source with the values document.
func renderMetaPackage(t *testing.T, values string) []byte {
	t.Helper()
	out, err := renderMetaPackageErr(t, values)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func renderMetaPackageErr(t *testing.T, values string) ([]byte, error) {
	t.Helper()
	return packagesource.Render(t, filepath.Join("tkg.tanzu.vmware.com", "2.5.2"), values)
}

// TestClusterClassPropagation checks that tkg-clusterclass's object-propagation configuration
// parses and names every kind the provider's ClusterClass package installs in its namespace
// (tkg-clusterclass itself for local, tkg-clusterclass-vsphere for vSphere), so that clusters in
// other namespaces find the ClusterClass and all of its templates.
func TestClusterClassPropagation(t *testing.T) {
	for provider, source := range map[string]string{"local": "tkg-clusterclass.tanzu.vmware.com", "vsphere": "tkg-clusterclass-vsphere.tanzu.vmware.com"} {
		t.Run(provider, func(t *testing.T) {
			out, err := packagesource.Render(t, filepath.Join("tkg-clusterclass.tanzu.vmware.com", "0.1.0"), "namespace: tkg-system\ninfrastructureProvider: "+provider+"\n")
			if err != nil {
				t.Fatal(err)
			}
			classes, err := packagesource.Render(t, filepath.Join(source, "0.1.0"), "namespace: tkg-system\n")
			if err != nil {
				t.Fatal(err)
			}
			objs, err := deploy.Parse(append(append(out, []byte("\n---\n")...), classes...))
			if err != nil {
				t.Fatal(err)
			}
			var entries []propagation.Entry
			kinds := map[string]bool{}
			for _, o := range objs {
				if o.GetKind() == "ConfigMap" && o.GetName() == "object-propagation-config" {
					data, _, _ := unstructured.NestedString(o.Object, "data", "configData")
					if entries, err = propagation.Parse([]byte(data)); err != nil {
						t.Fatalf("configData: %v", err)
					}
				}
				if g := o.GroupVersionKind().Group; strings.HasSuffix(g, "cluster.x-k8s.io") {
					kinds[o.GetAPIVersion()+" "+o.GetKind()] = true
				}
			}
			if !kinds["cluster.x-k8s.io/v1beta2 ClusterClass"] {
				t.Fatalf("no ClusterClass for %s", provider)
			}
			for _, e := range entries {
				if e.Source.Namespace != "tkg-system" || !e.Target.DetectAndReplaceSourceNSRef {
					t.Errorf("entry %+v does not copy from tkg-system with references replaced", e)
				}
				if !kinds[e.Source.APIVersion+" "+e.Source.Kind] {
					t.Errorf("entry for %s %s, which the %s ClusterClass does not use", e.Source.APIVersion, e.Source.Kind, provider)
				}
				delete(kinds, e.Source.APIVersion+" "+e.Source.Kind)
			}
			if len(entries) == 0 || len(kinds) > 0 {
				t.Errorf("%d entries; kinds installed but not propagated: %v", len(entries), kinds)
			}
		})
	}
}

// TestVSphereCredentialsRendered renders the vSphere CPI's and CSI's packages with the values
// their configs compute, and finds the vCenter credentials where the drivers read them, so
// that `credentials update` reaches the workload cluster.
func TestVSphereCredentialsRendered(t *testing.T) {
	for _, tc := range []struct {
		pkg, values string
		want        []string
	}{
		{filepath.Join("vsphere-cpi.tanzu.vmware.com", "1.27.0"),
			"vsphereCPI:\n  mode: vsphereCPI\n  vCenterAPIEndpoint: vc.example.com:8443\n  username: admin\n  password: s3cret\n  tlsThumbprint: AA:BB\n  datacenter: /dc0\n",
			[]string{"name: cloud-provider-vsphere-credentials", "vc.example.com.username: admin", "vc.example.com.password: s3cret",
				// The cloud provider's configuration names the vCenter, its port and thumbprint,
				// and where the credentials are.
				"--cloud-config=/etc/cloud/vsphere.conf", "server: vc.example.com", "port: 8443", "thumbprint: AA:BB",
				"secretName: cloud-provider-vsphere-credentials", "- dc0", "name: extension-apiserver-authentication-reader"}},
		{filepath.Join("vsphere-csi.tanzu.vmware.com", "3.1.2"),
			"vsphereCSI:\n  mode: vsphereCSI\n  namespace: vmware-system-csi\n  server: vc.example.com\n  username: admin\n  password: s3cret\n  clusterName: wc-1234\n",
			[]string{"name: csi-vsphere-config", "namespace: vmware-system-csi", `[VirtualCenter "vc.example.com"]`, `user = "admin"`, `password = "s3cret"`, `cluster-id = "wc-1234"`}},
		{filepath.Join("vsphere-cpi.tanzu.vmware.com", "1.27.0"),
			"vsphereCPI:\n  mode: vsphereCPI\n  vCenterAPIEndpoint: '[fd00::10]:8443'\n  username: admin\n  password: s3cret\n",
			[]string{"fd00::10.username: admin", "server: fd00::10", "port: 8443"}},
	} {
		out := string(render(t, tc.pkg, tc.values))
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s renders no %q:\n%s", tc.pkg, w, out)
			}
		}
	}
	// A paravirtual cluster names no vCenter: no cloud controller manager that would look for
	// one.
	out := string(render(t, filepath.Join("vsphere-cpi.tanzu.vmware.com", "1.27.0"), "vsphereCPI:\n  mode: vsphereParavirtualCPI\n"))
	for _, absent := range []string{"kind: DaemonSet", "vsphere.conf", "cloud-provider-vsphere-credentials"} {
		if strings.Contains(out, absent) {
			t.Errorf("a paravirtual cluster's vsphere-cpi renders %q:\n%s", absent, out)
		}
	}
}

// TestRegistryTrustRendered renders the registry trust the CLI and the addons manager give
// kapp-controller and the TKR source into the objects each reads it from: kapp-controller's
// kapp-controller-config Secret, the TKR source's tkr-controller-config ConfigMap and its flag.
func TestRegistryTrustRendered(t *testing.T) {
	const ca = "-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\\n"
	for _, tc := range []struct {
		pkg, values string
		want        []string
	}{
		{filepath.Join("kapp-controller.tanzu.vmware.com", "0.50.0"),
			"kappController:\n  config:\n    caCerts: \"" + ca + "\"\n    dangerousSkipTLSVerify: registry.example.com\n",
			[]string{"name: kapp-controller-config", "caCerts: |", "MIIB", "dangerousSkipTLSVerify: registry.example.com"}},
		{filepath.Join("tkr-source-controller.tanzu.vmware.com", "0.1.0"),
			"tkrSourceController:\n  caCerts: \"" + ca + "\"\n  skipVerifyRegistryCert: true\n",
			[]string{"name: tkr-controller-config", "caCerts: |", "MIIB", "--skip-verify-registry-cert=true"}},
	} {
		out := string(render(t, tc.pkg, tc.values))
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s renders no %q:\n%s", tc.pkg, w, out)
			}
		}
		// One configuration object: kapp and kapp-controller refuse a resource given twice.
		if n := strings.Count(out, "kind: Secret\n") + strings.Count(out, "kind: ConfigMap\n"); n != 1 {
			t.Errorf("%s renders %d configuration objects, want 1", tc.pkg, n)
		}
	}
}

func render(t *testing.T, dir, values string) []byte {
	t.Helper()
	out, err := packagesource.Render(t, dir, values)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return out
}
