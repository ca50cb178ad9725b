package main

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/images"
)

// TestImagesRunUnderContainerd imports every image `make images` built into a containerd of its
// own (Debian's containerd and runc) and runs each: its entrypoint answers --help. Each runs as
// the non-root user and is labelled with its source module and version; an upstream image's
// binary says, in its build information, that it was built from that module at that version.
func TestImagesRunUnderContainerd(t *testing.T) {
	help, user, host, tools := map[string]string{}, map[string]string{}, map[string][]string{}, map[string][]binary{}
	for _, s := range specs() {
		help[s.ref], user[s.ref], host[s.ref], tools[s.ref] = s.help, "65532:65532", s.host, s.tools
		switch {
		case s.root:
			user[s.ref] = "0:0"
		case s.user != "":
			user[s.ref] = s.user
		}
	}
	root, err := assets.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	layoutDir := filepath.Join(root, "bin", images.LayoutDir)
	built, err := images.ReadLayout(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	ctr := startContainerd(t)
	archive := filepath.Join(t.TempDir(), "images.tar")
	if err := tarDir(layoutDir, archive); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctr("images", "import", archive)
	t.Logf("imported %d images in %s", len(built), time.Since(start).Round(time.Millisecond))
	listed := ctr("images", "list", "-q")
	for i, b := range built {
		t.Run(b.Ref, func(t *testing.T) {
			if !strings.Contains(listed, b.Ref+"\n") {
				t.Fatalf("containerd did not import %s:\n%s", b.Ref, listed)
			}
			cfg, err := b.Image.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			labels := cfg.Config.Labels
			if cfg.Config.User != user[b.Ref] || labels[images.LabelSource] == "" || labels[images.LabelVersion] == "" {
				t.Errorf("user %q, labels %v", cfg.Config.User, labels)
			}
			// What the help must say, and how the test names it when it does not.
			var want, what string
			switch {
			case labels[images.LabelSimulated] == "true":
				want, what = "simulated stand-in for "+b.Ref, "the stand-in's help does not say what it stands in for"
			case labels[images.LabelSource] == slipwayModule && help[b.Ref] == "":
				want, what = "Usage of "+labels[images.LabelComponent], "the help does not give "+labels[images.LabelComponent]+"'s usage"
			case labels[images.LabelSource] == slipwayModule:
				want, what = help[b.Ref], fmt.Sprintf("the help does not say %q", help[b.Ref])
			default:
				want, what = help[b.Ref], "the help does not list "+help[b.Ref]
				checkBuildInfo(t, b, cfg.Config.Entrypoint[0], labels[images.LabelSource], labels[images.LabelVersion])
			}
			if out := runUntil(t, ctr, b.Ref, fmt.Sprintf("slipway-image-%d", i), cfg.Config.Entrypoint, want); !strings.Contains(out, want) {
				t.Errorf("%s:\n%s", what, out)
			}
			// The tools the image carries beside its entrypoint run, at their versions.
			for j, tool := range tools[b.Ref] {
				out := ctr("run", "--rm", b.Ref, fmt.Sprintf("slipway-image-%d-tool-%d", i, j), "/"+tool.entrypoint(), "version")
				if want := strings.TrimPrefix(tool.version, "v"); !strings.Contains(out, want) {
					t.Errorf("/%s version does not say %s:\n%s", tool.entrypoint(), want, out)
				}
			}
			// The host's commands the image carries run: their libraries are in it.
			for j, path := range host[b.Ref] {
				if !strings.HasPrefix(path, "/usr/sbin/") {
					continue
				}
				out := ctr("run", "--rm", b.Ref, fmt.Sprintf("slipway-image-%d-host-%d", i, j), path, "--version")
				if !strings.Contains(out, "v1.") {
					t.Errorf("%s --version printed no version:\n%s", path, out)
				}
			}
		})
	}
}

// helpAttempts is how many times runUntil runs a container. ctr's copy of a container's output
// can lose its tail when the process exits at once (CI saw kubeadm-bootstrap-controller's help
// end after its first line, "Usage of /manager:"): the help itself is the same every run, so a
// second run tells a lost tail from a wrong help.
const helpAttempts = 3

// runUntil runs image ref's entrypoint with --help, in containers named after id, until its
// output contains want, at most helpAttempts times, and returns the last output.
func runUntil(t *testing.T, ctr func(args ...string) string, ref, id string, entrypoint []string, want string) string {
	t.Helper()
	var out string
	for attempt := 1; attempt <= helpAttempts; attempt++ {
		args := append([]string{"run", "--rm", ref, fmt.Sprintf("%s-help-%d", id, attempt)}, entrypoint...)
		out = ctr(append(args, "--help")...)
		if strings.Contains(out, want) {
			return out
		}
		t.Logf("attempt %d: the output lacks %q (%d bytes)", attempt, want, len(out))
	}
	return out
}

// checkBuildInfo reads the image's entrypoint and checks with `go version -m` that its main
// package is of module source, at version.
func checkBuildInfo(t *testing.T, b images.Built, entrypoint, source, version string) {
	t.Helper()
	rc := mutate.Extract(b.Image)
	defer rc.Close()
	tr := tar.NewReader(rc)
	bin := filepath.Join(t.TempDir(), "manager")
	for {
		hdr, err := tr.Next()
		if err != nil {
			t.Fatalf("no %s in %s: %v", entrypoint, b.Ref, err)
		}
		if "/"+hdr.Name != entrypoint {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		break
	}
	out, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	var path, dep string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "path":
			path = f[1]
		case len(f) >= 3 && (f[0] == "mod" || f[0] == "dep") && f[1] == source:
			dep = f[2]
		}
	}
	// A main package of slipway's hack modules wraps upstream's (etcd's etcdmain, as go install
	// refuses etcd's module).
	if !(strings.HasPrefix(path, source) || strings.HasPrefix(path, slipwayModule+"/hack/")) || dep != version {
		t.Errorf("%s's binary is %s with %s at %q, want a main package of %s at %s:\n%s", b.Ref, path, source, dep, source, version, out)
	}
}

// startContainerd runs containerd with its state in a temporary directory until the test ends,
// and returns a function that runs ctr against it, failing the test on error.
func startContainerd(t *testing.T) func(args ...string) string {
	t.Helper()
	for _, bin := range []string{"containerd", "ctr", "runc"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not installed: apt-get install containerd runc (.ci/run installs them)", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Fatal("containerd runs containers as root: run the tests as root")
	}
	dir, err := os.MkdirTemp("", "slipway-containerd-")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "containerd.sock")
	config := fmt.Sprintf("version = 2\nroot = %q\nstate = %q\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  address = %q\n",
		filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock)
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	daemon := exec.CommandContext(ctx, "containerd", "--config", filepath.Join(dir, "config.toml"))
	daemon.Stdout, daemon.Stderr = logFile, logFile
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = daemon.Wait()
		logFile.Close()
		if t.Failed() {
			log, _ := os.ReadFile(logFile.Name())
			t.Logf("containerd's log:\n%s", lastLines(string(log), 30))
		}
		// Snapshots may hold mounts until containerd is gone.
		_ = os.RemoveAll(dir)
	})
	ctr := func(args ...string) (string, error) {
		cmd := exec.Command("ctr", append([]string{"--address", sock, "--namespace", "slipway-test"}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := ctr("version")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd did not answer in 20s: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return func(args ...string) string {
		t.Helper()
		out, err := ctr(args...)
		if err != nil {
			t.Fatalf("ctr %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
}

// tarDir writes the files under dir into a tar archive, as `ctr images import` reads an OCI
// image layout.
func tarDir(dir, archive string) error {
	f, err := os.Create(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if err := tw.WriteHeader(hdr); err != nil || d.IsDir() {
			return err
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
