package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/vm"
	"github.com/slipway-dev/slipway/internal/test/vcentertest"
)

// TestInstallerInABrowser serves `management-cluster create --ui` and drives it in Debian's
// Chromium, headless, with playwright-core (test/ui/installer.mjs): the token; the vSphere page
// on the vCenter simulator (the thumbprint accepted, the datacenter, its lists and its node OVA
// template as the OS image) up to the
// review; a validation error at its field, the review's file and command, a deploy that fails at validation (its package
// repository cannot be read) with its cause, and a reload that keeps the whole log. Screenshots
// of each page go to the test's output directory (SLIPWAY_UI_SHOTS, or a temporary one).
func TestInstallerInABrowser(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	url := serveUI(t, ctx, "management-cluster", "create", "--ui", "--browser", "none", "--bind", "127.0.0.1:0",
		"--package-repository", "127.0.0.1:1/nowhere/slipway-repo:v0.1.0")
	vc := vcentertest.Start(t)
	vcentertest.Template(t, vc, "ubuntu-2004-kube-v1.35.4+vmware.1", "v1.35.4+vmware.1-tkg.1-ubuntu-2004")
	runBrowser(t, ctx, "installer.mjs", url, vc.URL.Host, vc.Username, vc.Password)

	// A bind beyond this host is refused unless asked for.
	if out, err := runSlipway(t, "management-cluster", "create", "--ui", "--browser", "none", "--bind", "0.0.0.0:0"); err == nil ||
		!strings.Contains(out, "is not a loopback address") || !strings.Contains(out, "--bind-remote") {
		t.Errorf("--bind 0.0.0.0:0 without --bind-remote: %v\n%s", err, out)
	}
}

// serveUI starts slipway with args, an installer serving until ctx ends or the test does, and
// returns the URL it prints, token included.
func serveUI(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	srv := exec.CommandContext(ctx, slipway, args...)
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	// management-cluster create --ui prints TKG's "Serving kickstart UI at URL", slipway ui
	// "Serving the installer UI at URL"; every line is kept for the failure's message.
	served := regexp.MustCompile(`^Serving .* at (http://\S+)$`)
	urls := make(chan string, 1)
	var (
		mu    sync.Mutex
		lines []string
	)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
			if m := served.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(30 * time.Second):
	}
	if url == "" {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("slipway %s printed no URL within 30s:\n%s", strings.Join(args, " "), strings.Join(lines, "\n"))
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Fatalf("the URL %q is not a loopback one with a token", url)
	}
	return url
}

// runBrowser runs the browser script test/ui/SCRIPT with the installer's URL, the screenshots'
// directory and args, in Debian's Chromium, headless, with playwright-core, and returns what it
// printed. Screenshots go to SLIPWAY_UI_SHOTS, or a temporary directory.
func runBrowser(t *testing.T, ctx context.Context, script, url string, args ...string) string {
	t.Helper()
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	uiDir := filepath.Join(root, "test", "ui")
	chromium := "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("the browser test needs Debian's Chromium: apt-get install chromium (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(uiDir, "node_modules", "playwright-core")); err != nil {
		t.Fatalf("the browser test needs playwright-core: npm ci in test/ui (%v)", err)
	}
	shots := os.Getenv("SLIPWAY_UI_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	node := exec.CommandContext(ctx, "node", append([]string{filepath.Join(uiDir, script), url, shots}, args...)...)
	node.Env = append(os.Environ(), "CHROMIUM="+chromium)
	out, err := node.CombinedOutput()
	t.Logf("%s (screenshots in %s):\n%s", script, shots, out)
	if err != nil {
		t.Fatalf("%s failed: %v", script, err)
	}
	return string(out)
}

// TestInstallerWaysOut follows a deploy that fails after its bootstrap cluster was made (its
// waits given 1s) in Debian's Chromium (test/ui/waysout.mjs) and takes both ways out the page
// offers: resume on the kept bootstrap cluster, which fails again keeping them, then clean-up,
// after which no local cluster is left.
func TestInstallerWaysOut(t *testing.T) {
	addr, repo := pushPackages(t)
	pushNodeImages(t, addr)
	store := cluster.Store{Root: filepath.Join(home, "local")}
	beforeNodes := vm.OnHost()
	before, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	url := serveUI(t, ctx, "management-cluster", "create", "--ui", "--browser", "none", "--bind", "127.0.0.1:0",
		"--package-repository", repo, "-t", "1s")
	t.Cleanup(func() { deleteAddedClusters(t, store, before) })
	runBrowser(t, ctx, "waysout.mjs", url, "e2e-ui-fail")
	if after, err := store.List(); err != nil || len(after) != len(before) {
		t.Errorf("after the clean-up, %d local clusters (%v), %d before", len(after), err, len(before))
	}
	checkNoRealNodeLeft(t, beforeNodes)
}
