package source_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/carvel/deploy"
	"github.com/slipway-dev/slipway/internal/carvel/template"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/source"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// release is one release of the default catalogue, rendered from packages/tkr.
type release struct {
	tkr      *runv1alpha3.TanzuKubernetesRelease
	osImages map[string]*runv1alpha3.OSImage
	cbt      *runv1alpha3.ClusterBootstrapTemplate
	// secrets are the values Secrets the template names (type clusterbootstrap-secret).
	secrets map[string]bool
}

// TestDefaultCatalogue renders every release of packages/tkr as the TKR source will, checks each
// object against the API server's schemas (dry run), and checks the rules the TKR status
// controller applies for Valid, against the package sources that exist.
func TestDefaultCatalogue(t *testing.T) {
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	sources := packageSources(t, root)
	dirs, err := filepath.Glob(filepath.Join(root, "packages", "tkr", "v*"))
	if err != nil || len(dirs) < 2 {
		t.Fatalf("the catalogue needs at least two releases, found %v (%v)", dirs, err)
	}
	releases := map[string]release{}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			r := render(t, root, dir)
			releases[name] = r
			if r.tkr.Name != name || tkg.VersionLabel(r.tkr.Spec.Version) != name {
				t.Errorf("the release in %s is %s version %s", dir, r.tkr.Name, r.tkr.Spec.Version)
			}
			if !slices.Contains(tkg.VersionPrefixes(name), tkg.VersionLabel(r.tkr.Spec.Kubernetes.Version)) {
				t.Errorf("Kubernetes %s is not a prefix of %s", r.tkr.Spec.Kubernetes.Version, r.tkr.Spec.Version)
			}
			var kinds []string
			for _, ref := range r.tkr.Spec.OSImages {
				o, ok := r.osImages[ref.Name]
				if !ok {
					t.Errorf("OSImage %s is not in the bundle", ref.Name)
					continue
				}
				if o.Spec.KubernetesVersion != r.tkr.Spec.Kubernetes.Version {
					t.Errorf("OSImage %s has Kubernetes %s", o.Name, o.Spec.KubernetesVersion)
				}
				kinds = append(kinds, o.Spec.Image.Type+"/"+o.Spec.OS.Name+"-"+o.Spec.OS.Version)
			}
			slices.Sort(kinds)
			if want := []string{"local/local-host", "ova/photon-3", "ova/ubuntu-2004"}; !slices.Equal(kinds, want) {
				t.Errorf("OSImages %v, want %v", kinds, want)
			}
			var bootstrap []string
			for _, p := range r.tkr.Spec.BootstrapPackages {
				bootstrap = append(bootstrap, p.Name)
				if !sources[p.Name] {
					t.Errorf("bootstrap package %s has no source in packages/", p.Name)
				}
			}
			if r.cbt == nil || r.cbt.Name != name {
				t.Fatalf("no ClusterBootstrapTemplate named %s", name)
			}
			s := r.cbt.Spec
			for _, p := range append([]*runv1alpha3.ClusterBootstrapPackage{s.Kapp, s.CNI, s.CPI, s.CSI}, s.AdditionalPackages...) {
				if p == nil || !slices.Contains(bootstrap, p.RefName) {
					t.Errorf("ClusterBootstrapTemplate package %v is not a bootstrap package of the release", p)
					continue
				}
				if p.ValuesFrom != nil && p.ValuesFrom.SecretRef != "" && !r.secrets[p.ValuesFrom.SecretRef] {
					t.Errorf("package %s takes its values from Secret %s, which is not in the bundle", p.RefName, p.ValuesFrom.SecretRef)
				}
			}
		})
	}
	t.Run("package versions differ between releases", func(t *testing.T) {
		a, b := releases["v1.34.3---vmware.1-tkg.1"], releases["v1.35.4---vmware.1-tkg.1"]
		if a.tkr == nil || b.tkr == nil {
			t.Fatal("the catalogue needs v1.34.3 and v1.35.4")
		}
		// Both name kapp-controller 0.50.0: the Go module proxy refuses v0.50.1, which TKG's newer
		// release names (docs/packages.md).
		const sameKapp = "kapp-controller.tanzu.vmware.com.0.50.0+vmware.1-tkg.1"
		for i, p := range a.tkr.Spec.BootstrapPackages {
			if q := b.tkr.Spec.BootstrapPackages[i]; q.Name == p.Name && p.Name != sameKapp {
				t.Errorf("%s is the same in both releases", p.Name)
			}
		}
	})
	t.Run("compatibility metadata lists every release", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(root, "packages", "tkr", "compatibility.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		m := &source.CompatibilityMetadata{}
		if err := yaml.UnmarshalStrict(data, m); err != nil {
			t.Fatal(err)
		}
		for _, r := range releases {
			if !slices.ContainsFunc(m.ManagementClusterVersions, func(v source.ManagementClusterVersion) bool {
				return slices.Contains(v.SupportedKubernetesVersions, r.tkr.Spec.Version)
			}) {
				t.Errorf("%s is in no management cluster version's list", r.tkr.Spec.Version)
			}
		}
	})
}

// packageSources returns the names of the Packages of packages/.
func packageSources(t *testing.T, root string) map[string]bool {
	files, err := filepath.Glob(filepath.Join(root, "packages", "*", "*", "package.yml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pkg := &datapkgingv1alpha1.Package{}
		if err := yaml.Unmarshal(data, pkg); err != nil {
			t.Fatal(err)
		}
		out[pkg.Name] = true
	}
	return out
}

// render templates a release's configuration with its values, as its TKR bundle holds them, and
// dry-runs every object on the API server.
func render(t *testing.T, root, dir string) release {
	t.Helper()
	files := map[string]string{}
	for _, src := range []string{filepath.Join(root, "packages", "tkr", "config", "*"), filepath.Join(dir, "values.yml")} {
		matches, _ := filepath.Glob(src)
		for _, m := range matches {
			data, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			files["config/"+filepath.Base(m)] = string(data)
		}
	}
	steps := []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{Paths: []string{"config/"}}}}
	out, err := template.Template(t.Context(), nil, ns, steps, testfiles.WriteTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := deploy.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	r := release{osImages: map[string]*runv1alpha3.OSImage{}, secrets: map[string]bool{}}
	for _, u := range objs {
		if u.GetKind() != "TanzuKubernetesRelease" && u.GetKind() != "OSImage" {
			u.SetNamespace(ns)
		}
		if err := env.Client.Create(t.Context(), u.DeepCopy(), client.DryRunAll); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		var target any
		switch u.GetKind() {
		case "TanzuKubernetesRelease":
			r.tkr = &runv1alpha3.TanzuKubernetesRelease{}
			target = r.tkr
		case "OSImage":
			o := &runv1alpha3.OSImage{}
			r.osImages[u.GetName()] = o
			target = o
		case "ClusterBootstrapTemplate":
			r.cbt = &runv1alpha3.ClusterBootstrapTemplate{}
			target = r.cbt
		case "Secret":
			if typ, _, _ := unstructured.NestedString(u.Object, "type"); typ != addons.SecretTypeClusterBootstrap {
				t.Errorf("Secret %s has type %q, want %s", u.GetName(), typ, addons.SecretTypeClusterBootstrap)
			}
			r.secrets[u.GetName()] = true
			continue
		default:
			if u.GetAnnotations()["tkg.tanzu.vmware.com/template-config"] != "true" {
				t.Errorf("%s %s is not annotated as a template config", u.GetKind(), u.GetName())
			}
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, target, true); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	if r.tkr == nil {
		t.Fatalf("%s renders no TanzuKubernetesRelease", dir)
	}
	if !strings.HasPrefix(r.tkr.Spec.Version, "v") {
		t.Errorf("version %s does not start with v", r.tkr.Spec.Version)
	}
	return r
}
