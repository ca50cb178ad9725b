package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/test/clitest"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// greetPackage is a Package of the greet.example.com bundle bundleRef at version, with a values
// schema the CLI shows.
func greetPackage(version, bundleRef string) string {
	return fmt.Sprintf(`apiVersion: data.packaging.carvel.dev/v1alpha1
kind: Package
metadata:
  name: greet.example.com.%[1]s
spec:
  refName: greet.example.com
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

// checkPackageVerbs runs every verb of `slipway package` against kapp-controller on the cluster
// of kubeconfig, as the tanzu CLI's package plugin is used: a repository of two versions of a
// package pushed to the registry at host is added, updated, listed and read; the package is
// listed, its values schema shown and its default values written; it is installed with values,
// updated to the newer version, read, and deleted, a delete without -y asking first; update
// --install installs; a missing package or repository is refused with the way out.
func checkPackageVerbs(t *testing.T, kubeconfig, host string) {
	run := func(args ...string) (string, error) {
		t.Helper()
		return runSlipway(t, append(append([]string{"package"}, args...), "--kubeconfig", kubeconfig)...)
	}
	mustRun := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("slipway package %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	var versions []string
	for _, v := range []string{"1.0.0", "1.1.0"} {
		ref, err := bundle.Push(testfiles.WriteTree(t, map[string]string{
			".imgpkg/images.yml": "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\n",
			"config/schema.yml":  "#@data/values-schema\n---\ngreeting: hello\n",
			"config/cm.yml":      "#@ load(\"@ytt:data\", \"data\")\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greet\n  namespace: default\ndata:\n  version: \"" + v + "\"\n  greeting: #@ data.values.greeting\n",
		}), host+"/packages/greet:"+v)
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, ref)
	}
	repo, err := bundle.Push(testfiles.WriteTree(t, map[string]string{
		".imgpkg/images.yml":          "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\n",
		"packages/greet/metadata.yml": "apiVersion: data.packaging.carvel.dev/v1alpha1\nkind: PackageMetadata\nmetadata:\n  name: greet.example.com\nspec:\n  displayName: greet\n  shortDescription: A greeting\n",
		"packages/greet/1.0.0.yml":    greetPackage("1.0.0", versions[0]),
		"packages/greet/1.1.0.yml":    greetPackage("1.1.0", versions[1]),
	}), host+"/packages/greet-repo:v1")
	if err != nil {
		t.Fatal(err)
	}

	out := mustRun("repository", "add", "verbs", "--url", repo, "-n", tkg.PackageRepoGlobalNamespace, "--create-namespace")
	if !strings.Contains(out, "Added package repository 'verbs' in namespace 'tanzu-package-repo-global'") {
		t.Errorf("repository add said:\n%s", out)
	}
	out = mustRun("repository", "update", "verbs", "--url", repo, "-n", tkg.PackageRepoGlobalNamespace)
	if !strings.Contains(out, "Updated package repository 'verbs' in namespace 'tanzu-package-repo-global'") {
		t.Errorf("repository update said:\n%s", out)
	}
	if out, err := run("repository", "update", "nothere", "--url", repo); err == nil ||
		!strings.Contains(out, "package repository 'nothere' does not exist in namespace 'default': add it with `slipway package repository add nothere") {
		t.Errorf("updating a missing repository: %v\n%s", err, out)
	}
	out = mustRun("repository", "list", "-A")
	if !clitest.LineHas(out, "NAME", "REPOSITORY", "TAG", "STATUS", "DETAILS", "NAMESPACE") || !clitest.LineHas(out, "verbs", host+"/packages/greet-repo", "Reconcile succeeded", tkg.PackageRepoGlobalNamespace) {
		t.Errorf("repository list:\n%s", out)
	}
	out = mustRun("available", "list")
	if !clitest.LineHas(out, "NAME", "DISPLAY-NAME", "SHORT-DESCRIPTION", "LATEST-VERSION") || !clitest.LineHas(out, "greet.example.com", "A greeting", "1.1.0") {
		t.Errorf("available list (global packages seen from default):\n%s", out)
	}
	out = mustRun("available", "list", "greet.example.com")
	if !clitest.LineHas(out, "greet.example.com", "1.0.0") || !clitest.LineHas(out, "greet.example.com", "1.1.0") {
		t.Errorf("available list NAME:\n%s", out)
	}
	out = mustRun("available", "get", "greet.example.com/1.1.0", "--values-schema")
	if !clitest.LineHas(out, "KEY", "DEFAULT", "TYPE", "DESCRIPTION") || !clitest.LineHas(out, "greeting", "hello", "string", "What the ConfigMap says.") {
		t.Errorf("values schema:\n%s", out)
	}
	dir := t.TempDir()
	out, err = slipwayOutput(t, dir, "package", "available", "get", "greet.example.com/1.1.0", "--generate-default-values-file", "--kubeconfig", kubeconfig)
	if err != nil || !strings.Contains(out, "Created default values file at greet.example.com-1.1.0-default-values.yaml") {
		t.Errorf("--generate-default-values-file: %v\n%s", err, out)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "greet.example.com-1.1.0-default-values.yaml")); err != nil || string(data) != "# What the ConfigMap says.\ngreeting: \"hello\"\n" {
		t.Errorf("the default values file: %q, %v", data, err)
	}

	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte("greeting: hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out = mustRun("installed", "create", "greet", "-p", "greet.example.com", "-v", "1.0.0", "-f", values)
	if !strings.Contains(out, "Added installed package 'greet' in namespace 'default'") {
		t.Errorf("installed create said:\n%s", out)
	}
	out = mustRun("installed", "list")
	if !clitest.LineHas(out, "NAME", "PACKAGE-NAME", "PACKAGE-VERSION", "STATUS") || !clitest.LineHas(out, "greet", "greet.example.com", "1.0.0", "Reconcile succeeded") {
		t.Errorf("installed list:\n%s", out)
	}
	out = mustRun("installed", "update", "greet", "-v", "1.1.0")
	if !strings.Contains(out, "Updated installed package 'greet'") {
		t.Errorf("installed update said:\n%s", out)
	}
	out = mustRun("installed", "get", "greet")
	if !clitest.LineHas(out, "greet", "greet.example.com", "1.1.0", "Reconcile succeeded") {
		t.Errorf("installed get:\n%s", out)
	}
	out, err = run("installed", "create", "nope", "-p", "nothing.example.com", "-v", "1.0.0")
	if err == nil || !strings.Contains(out, "package 'nothing.example.com' is not available in namespace 'default'") {
		t.Errorf("installing a missing package: %v\n%s", err, out)
	}
	var listed []map[string]string
	if err := json.Unmarshal([]byte(mustRun("installed", "list", "-o", "json")), &listed); err != nil ||
		!slices.ContainsFunc(listed, func(p map[string]string) bool { return p["name"] == "greet" && p["package-version"] == "1.1.0" }) {
		t.Errorf("installed list -o json: %v, %v", listed, err)
	}
	if out := mustRun("repository", "get", "verbs", "-n", tkg.PackageRepoGlobalNamespace, "-o", "yaml"); !strings.Contains(out, "  name: verbs\n") {
		t.Errorf("repository get -o yaml:\n%s", out)
	}
	// Without -y, delete asks as the tanzu CLI does; no answer keeps the package.
	out, err = run("installed", "delete", "greet")
	if err == nil || !strings.Contains(out, "Deleting installed package 'greet' in namespace 'default'. Are you sure? [y/N]") {
		t.Errorf("delete without -y: %v\n%s", err, out)
	}
	if out := mustRun("installed", "list"); !clitest.LineHas(out, "greet", "greet.example.com") {
		t.Errorf("an unconfirmed delete deleted:\n%s", out)
	}
	mustRun("installed", "delete", "greet", "-y")
	// update --install installs what is not installed; without it, the fix is named. (Its
	// ConfigMap is greet's: kapp refuses an object another app owns.)
	if out, err := run("installed", "update", "greet2", "-p", "greet.example.com", "-v", "1.0.0"); err == nil || !strings.Contains(out, "add --install") {
		t.Errorf("update of a package not installed: %v\n%s", err, out)
	}
	out = mustRun("installed", "update", "greet2", "-p", "greet.example.com", "-v", "1.0.0", "--install", "--poll-interval", "1s", "--poll-timeout", "2m")
	if !strings.Contains(out, "Added installed package 'greet2' in namespace 'default'") {
		t.Errorf("update --install said:\n%s", out)
	}
	mustRun("installed", "delete", "greet2", "-y")
	out = mustRun("installed", "list")
	if clitest.LineHas(out, "greet", "greet.example.com") || clitest.LineHas(out, "greet2", "greet.example.com") {
		t.Errorf("installed list after delete:\n%s", out)
	}
	mustRun("repository", "delete", "verbs", "-n", tkg.PackageRepoGlobalNamespace, "-y")
	out = mustRun("available", "list")
	if clitest.LineHas(out, "greet.example.com") {
		t.Errorf("available list after the repository's delete:\n%s", out)
	}
}
