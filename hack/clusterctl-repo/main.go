// Command clusterctl-repo builds the local clusterctl provider repository slipway installs
// Cluster API from: the components of cluster-api (core), kubeadm bootstrap and kubeadm control
// plane built with kustomize from the Cluster API module's own config, CAPV's (the vsphere
// infrastructure provider) from its module's config, the in-cluster IPAM provider's from its
// module's config in TKG's namespace (caip-in-cluster-system), the `local` infrastructure
// provider's from config/infrastructure-local, cert-manager's
// release manifest as upstream renders it from its chart (hack/images/cert-manager/render), each
// version's metadata.yaml, and a clusterctl configuration that points at them. Every image the components name is locked by digest (NAME:TAG@sha256:…)
// to the image `make images` built for it (bin/images/layout). It is run by `make providers`;
// the output is not committed.
//
// Usage: go run ./hack/clusterctl-repo -cert-manager MANIFEST OUTPUT_DIR (from the source root:
// the images are read from bin/images/layout)
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/slipway-dev/slipway/internal/client/clusterctl"
	"github.com/slipway-dev/slipway/internal/images"
)

func main() {
	certManager := flag.String("cert-manager", "", "cert-manager's release manifest, rendered from its chart (hack/images/cert-manager/render)")
	flag.Parse()
	if flag.NArg() != 1 || *certManager == "" {
		fmt.Fprintln(os.Stderr, "usage: clusterctl-repo -cert-manager MANIFEST OUTPUT_DIR")
		os.Exit(2)
	}
	if err := build(flag.Arg(0), *certManager, filepath.Join("bin", images.LayoutDir)); err != nil {
		fmt.Fprintln(os.Stderr, "clusterctl-repo:", err)
		os.Exit(1)
	}
}

func build(out, certManagerManifest, layout string) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	digests, err := images.Digests(layout)
	if err != nil {
		return err
	}
	lock := func(components []byte) ([]byte, error) { return lockImages(components, digests) }
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	// Cluster API's module gives three providers: `go mod download` is asked once per module.
	modDirs := map[string]string{}
	for _, p := range clusterctl.Providers() {
		dir, metadata := p.KustomizeDir, []byte(clusterctl.LocalMetadata)
		if p.Module != "" {
			modDir, ok := modDirs[p.Module+"@"+p.Version]
			if !ok {
				if modDir, err = moduleDir(p.Module, p.Version); err != nil {
					return err
				}
				modDirs[p.Module+"@"+p.Version] = modDir
			}
			dir = filepath.Join(modDir, p.KustomizeDir)
			if metadata, err = os.ReadFile(filepath.Join(modDir, "metadata.yaml")); err != nil {
				return err
			}
			if p.UpstreamPrefix != "" {
				copied, err := renamed(modDir, p.KustomizeDir, p.UpstreamPrefix, p.Prefix)
				if err != nil {
					return fmt.Errorf("provider %s: %w", p.Name, err)
				}
				defer func() { _ = os.RemoveAll(copied.root) }()
				dir = copied.dir
			}
		}
		components, err := kustomize(dir, p.Module != "")
		if err != nil {
			return fmt.Errorf("provider %s: %w", p.Name, err)
		}
		if p.StagingImage != "" {
			components = bytes.ReplaceAll(components, []byte(p.StagingImage), []byte(p.Image))
		}
		if components, err = lock(components); err != nil {
			return fmt.Errorf("provider %s: %w", p.Name, err)
		}
		if err := write(filepath.Join(out, p.Name, p.Version, p.ComponentsFile), components); err != nil {
			return err
		}
		if err := write(filepath.Join(out, p.Name, p.Version, "metadata.yaml"), metadata); err != nil {
			return err
		}
	}
	// cert-manager: upstream's release manifest, its images those `make images` built.
	certManager, err := os.ReadFile(certManagerManifest)
	if err != nil {
		return fmt.Errorf("cert-manager's release manifest: %w: render it with `go run ./render -o FILE` in hack/images/cert-manager", err)
	}
	locked, err := lock(certManager)
	if err != nil {
		return fmt.Errorf("cert-manager: %w", err)
	}
	if err := write(filepath.Join(out, clusterctl.CertManagerName, clusterctl.CertManagerVersion, clusterctl.CertManagerFile), locked); err != nil {
		return err
	}
	if err := write(filepath.Join(out, clusterctl.CertManagerName, clusterctl.CertManagerVersion, "metadata.yaml"), []byte(clusterctl.CertManagerMetadata)); err != nil {
		return err
	}
	fmt.Printf("clusterctl repository written to %s\n", out)
	return nil
}

// imageField is a manifest's `image:` line.
var imageField = regexp.MustCompile(`(?m)^(\s*-?\s*image:\s*)"?([^\s"@]+)"?\s*$`)

// lockImages names every image of the manifests by its tag and the digest of the image built for
// it, and refuses an image that was not built.
func lockImages(manifests []byte, digests map[string]string) ([]byte, error) {
	var missing []string
	locked := imageField.ReplaceAllFunc(manifests, func(line []byte) []byte {
		m := imageField.FindSubmatch(line)
		ref := string(m[2])
		digest, ok := digests[ref]
		if !ok {
			missing = append(missing, ref)
			return line
		}
		return []byte(string(m[1]) + ref + "@" + digest)
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("images %s are not among those `make images` built: add them to hack/images/images.go", strings.Join(missing, ", "))
	}
	return locked, nil
}

// kustomize builds a kustomization as `kustomize build` does. Kustomize prints notices of
// deprecated fields on stderr; quiet drops them, for upstream kustomizations (CAPV's uses bases,
// vars and commonLabels), which are not this repository's to fix.
func kustomize(dir string, quiet bool) ([]byte, error) {
	if quiet {
		devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		stderr := os.Stderr
		os.Stderr = devNull
		defer func() {
			os.Stderr = stderr
			_ = devNull.Close()
		}()
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resources, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	return resources.AsYaml()
}

// kustomizationCopy is a module's kustomizations copied out of the read-only module cache.
type kustomizationCopy struct {
	// root is the temporary directory that holds the copy; dir is the kustomization's in it.
	root, dir string
}

// renamed copies the module's tree that holds the kustomization (config/ for config/default)
// into a temporary directory and replaces the prefix upstream gives every name and the namespace
// in all of its files with prefix, as TKG names a provider it builds from upstream.
func renamed(modDir, kustomizeDir, upstreamPrefix, prefix string) (c kustomizationCopy, err error) {
	if c.root, err = os.MkdirTemp("", "clusterctl-repo-"); err != nil {
		return c, err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(c.root)
		}
	}()
	c.dir = filepath.Join(c.root, kustomizeDir)
	top := strings.Split(filepath.ToSlash(kustomizeDir), "/")[0]
	if err := os.CopyFS(filepath.Join(c.root, top), os.DirFS(filepath.Join(modDir, top))); err != nil {
		return c, err
	}
	return c, filepath.WalkDir(filepath.Join(c.root, top), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(path, bytes.ReplaceAll(data, []byte(upstreamPrefix), []byte(prefix)), 0o644)
	})
}

// moduleDir returns where the Go module cache holds a module, downloading it if needed.
func moduleDir(path, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", path+"@"+version)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w: %s", path, version, err, strings.TrimSpace(stderr.String()))
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(data, &info); err != nil {
		return "", err
	}
	return info.Dir, nil
}

func write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
