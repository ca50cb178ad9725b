package packages_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/cli/packages"
	"github.com/slipway-dev/slipway/internal/controllers/packaging/app"
	"github.com/slipway-dev/slipway/internal/controllers/packaging/packageinstall"
	"github.com/slipway-dev/slipway/internal/controllers/packaging/packagerepository"
	"github.com/slipway-dev/slipway/internal/test/clitest"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
	"github.com/slipway-dev/slipway/internal/test/testregistry"
	"github.com/slipway-dev/slipway/internal/tkg"
)

var (
	env        *envtest.Environment
	kubeconfig string
)

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
			func(mgr ctrl.Manager) error {
				return (&packagerepository.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
			},
		)
		var err error
		if kubeconfig, err = e.WriteKubeconfig(); err != nil {
			panic(err)
		}
	}))
}

// run runs `slipway package ARGS` and returns what it printed.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return clitest.Runner{New: packages.NewCommand, Kubeconfig: kubeconfig}.Run(t, args...)
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	return clitest.Runner{New: packages.NewCommand, Kubeconfig: kubeconfig}.MustRun(t, args...)
}

func packageYAML(version, bundleRef string) string {
	return fmt.Sprintf(`apiVersion: data.packaging.carvel.dev/v1alpha1
kind: Package
metadata:
  name: web.example.com.%[1]s
spec:
  refName: web.example.com
  version: %[1]s
  releasedAt: "2026-01-01T00:00:00Z"
  valuesSchema:
    openAPIv3:
      type: object
      properties:
        greeting:
          type: string
          default: hello
          description: What the ConfigMap says.
  template:
    spec:
      fetch:
      - imgpkgBundle:
          image: %[2]s
      template:
      - ytt:
          paths: [config/]
      deploy:
      - kapp: {}
`, version, bundleRef)
}

func TestPackageVerbs(t *testing.T) {
	host := testregistry.Start(t)
	var versions []string
	for _, v := range []string{"1.0.0", "1.1.0"} {
		ref, err := bundle.Push(testfiles.WriteTree(t, map[string]string{
			".imgpkg/images.yml": "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\n",
			"config/schema.yml":  "#@data/values-schema\n---\ngreeting: hello\n",
			"config/cm.yml":      "#@ load(\"@ytt:data\", \"data\")\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: default\ndata:\n  version: \"" + v + "\"\n  greeting: #@ data.values.greeting\n",
		}), host+"/packages/web:"+v)
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, ref)
	}
	repo, err := bundle.Push(testfiles.WriteTree(t, map[string]string{
		".imgpkg/images.yml":        "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\n",
		"packages/web/metadata.yml": "apiVersion: data.packaging.carvel.dev/v1alpha1\nkind: PackageMetadata\nmetadata:\n  name: web.example.com\nspec:\n  displayName: web\n  shortDescription: A web greeting\n",
		"packages/web/1.0.0.yml":    packageYAML("1.0.0", versions[0]),
		"packages/web/1.1.0.yml":    packageYAML("1.1.0", versions[1]),
	}), host+"/packages/repo:v1")
	if err != nil {
		t.Fatal(err)
	}

	out := mustRun(t, "repository", "add", "standard", "--url", repo, "-n", tkg.PackageRepoGlobalNamespace, "--create-namespace")
	if !strings.Contains(out, "Added package repository 'standard' in namespace 'tanzu-package-repo-global'") {
		t.Errorf("repository add said:\n%s", out)
	}
	out = mustRun(t, "repository", "update", "standard", "--url", repo, "-n", tkg.PackageRepoGlobalNamespace)
	if !strings.Contains(out, "Updated package repository 'standard' in namespace 'tanzu-package-repo-global'") {
		t.Errorf("repository update said:\n%s", out)
	}
	if out, err := run(t, "repository", "update", "nothere", "--url", repo); err == nil ||
		!strings.Contains(err.Error(), "package repository 'nothere' does not exist in namespace 'default': add it with `slipway package repository add nothere") {
		t.Errorf("updating a missing repository: %v\n%s", err, out)
	}
	out = mustRun(t, "repository", "list", "-A")
	if !clitest.LineHas(out, "NAME", "REPOSITORY", "TAG", "STATUS", "DETAILS", "NAMESPACE") || !clitest.LineHas(out, "standard", host+"/packages/repo", "Reconcile succeeded", tkg.PackageRepoGlobalNamespace) {
		t.Errorf("repository list:\n%s", out)
	}
	out = mustRun(t, "available", "list")
	if !clitest.LineHas(out, "NAME", "DISPLAY-NAME", "SHORT-DESCRIPTION", "LATEST-VERSION") || !clitest.LineHas(out, "web.example.com", "A web greeting", "1.1.0") {
		t.Errorf("available list (global packages seen from default):\n%s", out)
	}
	out = mustRun(t, "available", "list", "web.example.com")
	if !clitest.LineHas(out, "web.example.com", "1.0.0") || !clitest.LineHas(out, "web.example.com", "1.1.0") {
		t.Errorf("available list NAME:\n%s", out)
	}
	out = mustRun(t, "available", "get", "web.example.com/1.1.0", "--values-schema")
	if !clitest.LineHas(out, "KEY", "DEFAULT", "TYPE", "DESCRIPTION") || !clitest.LineHas(out, "greeting", "hello", "string", "What the ConfigMap says.") {
		t.Errorf("values schema:\n%s", out)
	}

	t.Chdir(t.TempDir())
	out = mustRun(t, "available", "get", "web.example.com/1.1.0", "--generate-default-values-file")
	if !strings.Contains(out, "Created default values file at web.example.com-1.1.0-default-values.yaml") {
		t.Errorf("--generate-default-values-file said:\n%s", out)
	}
	if data, err := os.ReadFile("web.example.com-1.1.0-default-values.yaml"); err != nil || string(data) != "# What the ConfigMap says.\ngreeting: \"hello\"\n" {
		t.Errorf("the default values file: %q, %v", data, err)
	}

	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte("greeting: hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out = mustRun(t, "installed", "create", "web", "-p", "web.example.com", "-v", "1.0.0", "-f", values)
	if !strings.Contains(out, "Added installed package 'web' in namespace 'default'") {
		t.Errorf("installed create said:\n%s", out)
	}
	out = mustRun(t, "installed", "list")
	if !clitest.LineHas(out, "NAME", "PACKAGE-NAME", "PACKAGE-VERSION", "STATUS") || !clitest.LineHas(out, "web", "web.example.com", "1.0.0", "Reconcile succeeded") {
		t.Errorf("installed list:\n%s", out)
	}
	out = mustRun(t, "installed", "update", "web", "-v", "1.1.0")
	if !strings.Contains(out, "Updated installed package 'web'") {
		t.Errorf("installed update said:\n%s", out)
	}
	out = mustRun(t, "installed", "get", "web")
	if !clitest.LineHas(out, "web", "web.example.com", "1.1.0", "Reconcile succeeded") {
		t.Errorf("installed get:\n%s", out)
	}

	out, err = run(t, "installed", "create", "nope", "-p", "nothing.example.com", "-v", "1.0.0")
	if err == nil || !strings.Contains(err.Error(), "package 'nothing.example.com' is not available in namespace 'default'") {
		t.Errorf("installing a missing package: %v\n%s", err, out)
	}

	var listed []map[string]string
	if err := json.Unmarshal([]byte(mustRun(t, "installed", "list", "-o", "json")), &listed); err != nil || len(listed) != 1 ||
		listed[0]["name"] != "web" || listed[0]["package-version"] != "1.1.0" {
		t.Errorf("installed list -o json: %v, %v", listed, err)
	}
	if out := mustRun(t, "repository", "get", "standard", "-n", tkg.PackageRepoGlobalNamespace, "-o", "yaml"); !strings.Contains(out, "  name: standard\n") {
		t.Errorf("repository get -o yaml:\n%s", out)
	}
	// Without -y, delete asks as the tanzu CLI does; no answer keeps the package.
	out, err = run(t, "installed", "delete", "web")
	if err == nil || !strings.Contains(out, "Deleting installed package 'web' in namespace 'default'. Are you sure? [y/N]") {
		t.Errorf("delete without -y: %v\n%s", err, out)
	}
	if out := mustRun(t, "installed", "list"); !clitest.LineHas(out, "web", "web.example.com") {
		t.Errorf("an unconfirmed delete deleted:\n%s", out)
	}
	// update --install installs what is not installed; without it, the fix is named.
	if out, err := run(t, "installed", "update", "web2", "-p", "web.example.com", "-v", "1.0.0"); err == nil || !strings.Contains(err.Error(), "add --install") {
		t.Errorf("update of a package not installed: %v\n%s", err, out)
	}
	out = mustRun(t, "installed", "update", "web2", "-p", "web.example.com", "-v", "1.0.0", "--install", "--poll-interval", "200ms", "--poll-timeout", "2m")
	if !strings.Contains(out, "Added installed package 'web2' in namespace 'default'") {
		t.Errorf("update --install said:\n%s", out)
	}
	mustRun(t, "installed", "delete", "web2", "-y")
	mustRun(t, "installed", "delete", "web", "-y")
	out = mustRun(t, "installed", "list")
	if clitest.LineHas(out, "web", "web.example.com") {
		t.Errorf("installed list after delete:\n%s", out)
	}
	mustRun(t, "repository", "delete", "standard", "-n", tkg.PackageRepoGlobalNamespace, "-y")
	out = mustRun(t, "available", "list")
	if clitest.LineHas(out, "web.example.com") {
		t.Errorf("available list after the repository's delete:\n%s", out)
	}
}
