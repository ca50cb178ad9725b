package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/images"
	"github.com/slipway-dev/slipway/internal/test/testfiles"
)

// Upstream's kapp-controller, as `make images` builds it (hack/images), and the Carvel tools
// its image carries.
const (
	kappControllerModule  = "github.com/vmware-tanzu/carvel-kapp-controller"
	kappControllerVersion = "v0.50.0"
	kappControllerRef     = assets.ImageRepository + "/kapp-controller:" + kappControllerVersion + "_vmware.1"
	yttInImages           = "ytt-v0.48.0"
)

// runUpstreamKappController installs upstream's kapp-controller from its own release manifests
// (rendered with its own ytt from the module `make images` builds it from) on a cluster of real
// nodes, as TKG's package does: on the host network, with API priority and fairness off (its
// client's flowcontrol v1beta3 is gone from Kubernetes 1.32). Its aggregated API serves Packages;
// a Package named as TKG names them (refName.version, with the version's "+") installs from an
// imgpkg bundle in the local registry through vendir, ytt, kbld and kapp, with values; deleting
// the PackageInstall deletes what it deployed.
func runUpstreamKappController(t *testing.T, registryAddr string, kubectl func(args ...string) (string, error)) {
	mustKubectl := func(stdin string, args ...string) string {
		t.Helper()
		return mustKubectlStdin(t, kubectl, stdin, args...)
	}
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	pushUpstreamImage(t, root, registryAddr, kappControllerRef, kappControllerModule, kappControllerVersion)

	release := renderKappControllerRelease(t, root)
	start := time.Now()
	mustKubectl(release, "apply", "-f", "-")
	eventually(t, 3*time.Minute, "kapp-controller's aggregated API available", func() error {
		out, err := kubectl("get", "apiservice", "v1alpha1.data.packaging.carvel.dev",
			"-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
		if err != nil || out != "True" {
			return fmt.Errorf("Available %q: %v", out, err)
		}
		return nil
	})
	t.Logf("kapp-controller's aggregated API available %s after apply", time.Since(start).Round(100*time.Millisecond))
	if out := mustKubectl("", "get", "pods", "-n", "kapp-controller", "-o",
		"jsonpath={range .items[*].spec.containers[*]}{.image}{\"\\n\"}{end}"); strings.Count(out, kappControllerRef) != 2 {
		t.Errorf("kapp-controller's pod does not run %s in both containers:\n%s", kappControllerRef, out)
	}

	bundle := pushGreetingBundle(t, registryAddr)
	const version = "1.0.0+e2e.1"
	pkg := fmt.Sprintf(`apiVersion: data.packaging.carvel.dev/v1alpha1
kind: Package
metadata:
  name: greeting.e2e.slipway.dev.%[1]s
  namespace: default
spec:
  refName: greeting.e2e.slipway.dev
  version: %[1]s
  template:
    spec:
      fetch:
      - imgpkgBundle:
          image: %[2]s
      template:
      - ytt:
          paths: [config/]
      - kbld:
          paths: ["-", .imgpkg/images.yml]
      deploy:
      - kapp: {}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: greeting-installer
  namespace: default
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: greeting-installer
  namespace: default
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: admin
subjects:
- kind: ServiceAccount
  name: greeting-installer
  namespace: default
---
apiVersion: v1
kind: Secret
metadata:
  name: greeting-values
  namespace: default
stringData:
  values.yml: "greeting: installed by upstream kapp-controller"
---
apiVersion: packaging.carvel.dev/v1alpha1
kind: PackageInstall
metadata:
  name: greeting
  namespace: default
spec:
  serviceAccountName: greeting-installer
  packageRef:
    refName: greeting.e2e.slipway.dev
    versionSelection:
      constraints: %[1]s
  values:
  - secretRef:
      name: greeting-values
`, version, bundle)
	installed := time.Now()
	mustKubectl(pkg, "apply", "-f", "-")
	if out := mustKubectl("", "get", "packages", "-n", "default"); !strings.Contains(out, "greeting.e2e.slipway.dev."+version) {
		t.Errorf("the aggregated API does not list the Package:\n%s", out)
	}
	eventually(t, 2*time.Minute, "the PackageInstall reconciled", func() error {
		out, err := kubectl("get", "packageinstall", "greeting", "-n", "default", "-o",
			`jsonpath={.status.conditions[?(@.type=="ReconcileSucceeded")].status} {.status.usefulErrorMessage}`)
		if err != nil || !strings.HasPrefix(out, "True") {
			return fmt.Errorf("%q: %v", out, err)
		}
		return nil
	})
	t.Logf("the PackageInstall reconciled %s after apply", time.Since(installed).Round(100*time.Millisecond))
	if out := mustKubectl("", "get", "configmap", "greeting", "-n", "default", "-o", "jsonpath={.data.greeting}"); out != "installed by upstream kapp-controller" {
		t.Errorf("the package's ConfigMap says %q, not the PackageInstall's value", out)
	}
	mustKubectl("", "delete", "packageinstall", "greeting", "-n", "default", "--timeout=2m")
	if out, err := kubectl("get", "configmap", "greeting", "-n", "default"); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("the package's ConfigMap outlived its PackageInstall: %v\n%s", err, out)
	}
	logProcessMemory(t, "kapp-controller's processes", "/kapp-controller\x00")
	// Uninstalled, its aggregated API goes with it, and discovery is whole again.
	deleteRelease(t, kubectl, release, "carvel.dev", "k14s.io")
	if out, err := kubectl("api-resources"); err != nil {
		t.Errorf("discovery after kapp-controller's removal: %v\n%s", err, out)
	}
}

// deleteRelease deletes an engine's release manifest and waits until all of it is gone: first its
// CustomResourceDefinitions, those of groups ending in one of suffixes (waitForDefinitionsDeleted),
// then the rest, with kubectl's own wait.
func deleteRelease(t *testing.T, kubectl func(args ...string) (string, error), release string, suffixes ...string) {
	t.Helper()
	mustKubectlStdin(t, kubectl, release, "delete", "-f", "-", "--wait=false")
	waitForDefinitionsDeleted(t, kubectl, suffixes...)
	mustKubectlStdin(t, kubectl, release, "delete", "-f", "-", "--ignore-not-found", "--timeout=2m")
}

// waitForDefinitionsDeleted waits until no CustomResourceDefinition of a group ending in one of
// suffixes is left. Upstream's API server can leave a deleted definition Terminating for up to its
// informer's 5-minute resync: when its finalizer's first try fails with "storage is
// (re)initializing" (the definition's watch cache not yet ready), the retry reads a stale copy,
// meets a conflict and is dropped, and the finalizer ignores updates that change only the
// Terminating condition. A definition stuck so is annotated once, which queues it again; should
// that not free it, the resync does, within the wait.
func waitForDefinitionsDeleted(t *testing.T, kubectl func(args ...string) (string, error), suffixes ...string) {
	t.Helper()
	start := time.Now()
	nudged := map[string]bool{}
	eventually(t, 6*time.Minute, "the CustomResourceDefinitions deleted", func() error {
		out, err := kubectl("get", "crd", "-o", `jsonpath={range .items[*]}{.metadata.name}|{.status.conditions[?(@.type=="Terminating")].message}{"\n"}{end}`)
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		var left []string
		for line := range strings.Lines(out) {
			name, message, _ := strings.Cut(strings.TrimSpace(line), "|")
			if !slices.ContainsFunc(suffixes, func(s string) bool { return strings.HasSuffix(name, "."+s) }) {
				continue
			}
			left = append(left, name+": "+message)
			if strings.Contains(message, "storage is (re)initializing") && !nudged[name] && time.Since(start) > 10*time.Second {
				if out, err := kubectl("annotate", "crd", name, "e2e.slipway.dev/requeue=1"); err != nil {
					return fmt.Errorf("annotating %s: %v: %s", name, err, out)
				}
				nudged[name] = true
				t.Logf("%s stuck on upstream's finalizer race (%s): annotated to queue it again", name, message)
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("left: %s", strings.Join(left, "; "))
		}
		return nil
	})
	t.Logf("the CustomResourceDefinitions deleted %s after the delete", time.Since(start).Round(100*time.Millisecond))
}

// mustKubectlStdin runs kubectlStdin and fails the test when kubectl fails.
func mustKubectlStdin(t *testing.T, kubectl func(args ...string) (string, error), stdin string, args ...string) string {
	t.Helper()
	out, err := kubectlStdin(t.Context(), kubectl, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// kubectlStdin runs kubectl with stdin when it is not empty.
func kubectlStdin(ctx context.Context, kubectl func(args ...string) (string, error), stdin string, args ...string) (string, error) {
	if stdin == "" {
		return kubectl(args...)
	}
	f, err := os.CreateTemp("", "manifest-*.yaml")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(stdin); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	for i, a := range args {
		if a == "-" {
			args[i] = f.Name()
		}
	}
	return kubectl(args...)
}

// pushUpstreamImage pushes an upstream image from the layout `make images` wrote to the test's
// registry and checks that it is upstream's build of module at version, not a stand-in.
func pushUpstreamImage(t *testing.T, root, registryAddr, ref, module, version string) {
	t.Helper()
	built, err := images.ReadLayout(filepath.Join(root, "bin", images.LayoutDir))
	if err != nil {
		t.Fatalf("%v (make image-layout builds the images)", err)
	}
	for _, b := range built {
		if b.Ref != ref {
			continue
		}
		if _, _, err := images.Push(t.Context(), registryAddr, b); err != nil {
			t.Fatal(err)
		}
		cfg, err := b.Image.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if labels := cfg.Config.Labels; !upstreamBuild(labels, module, version) {
			t.Errorf("%s is not upstream's %s %s: labels %v", ref, module, version, labels)
		}
		return
	}
	t.Fatalf("the image layout has no %s: run make image-layout", ref)
}

// upstreamBuild says whether an image's labels name upstream's module at version, built here
// from its own main package: not a stand-in, not one of slipway's components.
func upstreamBuild(labels map[string]string, module, version string) bool {
	return labels[images.LabelSource] == module && labels[images.LabelVersion] == version &&
		labels[images.LabelSimulated] == "" && labels[images.LabelComponent] == ""
}

// renderKappControllerRelease renders upstream's release manifests of kapp-controller v0.50.0
// from its module with ytt, with the values TKG's package gives on a cluster whose registry is
// the node's loopback.
func renderKappControllerRelease(t *testing.T, root string) string {
	t.Helper()
	// make copies the module's release configuration there (the kapp-controller package loads it).
	config := filepath.Join(root, "bin", "kapp-controller", kappControllerVersion, "config")
	ytt := filepath.Join(root, "bin", "images", "bin", yttInImages)
	out, err := exec.CommandContext(t.Context(), ytt, "-f", filepath.Join(config, "config"), "-f", filepath.Join(config, "values-schema.yml"),
		"-f", filepath.Join(config, "overlays"), "--data-value-yaml", "hostNetwork=true",
		"--data-value-yaml", "enableApiPriorityAndFairness=false").Output()
	if err != nil {
		t.Fatalf("%s of kapp-controller's release (make images builds it): %v", ytt, err)
	}
	release := strings.ReplaceAll(string(out), "image: kapp-controller\n", "image: "+kappControllerRef+"\n")
	if strings.Count(release, kappControllerRef) != 2 {
		t.Fatalf("kapp-controller's release names its image %d times, not twice:\n%s", strings.Count(release, kappControllerRef), release)
	}
	return release
}

// pushGreetingBundle pushes an imgpkg bundle of one ytt template, a ConfigMap whose greeting
// is a data value, and returns its reference by digest.
func pushGreetingBundle(t *testing.T, registryAddr string) string {
	t.Helper()
	ref, err := bundle.Push(testfiles.WriteTree(t, map[string]string{
		"config/values.yml": "#@data/values-schema\n---\ngreeting: hello\n",
		"config/greeting.yml": "#@ load(\"@ytt:data\", \"data\")\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\n" +
			"  namespace: default\ndata:\n  greeting: #@ data.values.greeting\n",
		".imgpkg/images.yml": "apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\nimages: []\n",
	}), registryAddr+"/e2e/greeting-bundle:1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// logProcessMemory logs the resident memory of this host's processes whose command line starts
// with prefix, for the note's comparison of upstream's engines with slipway's stand-ins.
func logProcessMemory(t *testing.T, what, prefix string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var lines []string
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(cmdline, []byte(prefix)) {
			continue
		}
		status, err := os.ReadFile(filepath.Join(filepath.Dir(p), "status"))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(l, "VmRSS:") {
				lines = append(lines, strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")+": "+strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:")))
			}
		}
	}
	t.Logf("%s: %s", what, strings.Join(lines, "; "))
}
