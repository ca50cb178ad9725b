package assets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Binary names of the upstream components.
const (
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
	Etcd                  = "etcd"
)

// EtcdVersion is the etcd every local control plane runs.
const EtcdVersion = "v3.6.5"

// DirEnv names the environment variable that points at the assets directory, the one holding
// k8s/ and etcd/. It wins over every other way of finding it.
const DirEnv = "SLIPWAY_ASSETS_DIR"

// KubernetesVersions are the Kubernetes versions the local runtime runs, newest first. Keep in
// step with hack/tools/build.sh.
var KubernetesVersions = []string{"v1.35.4", "v1.34.3"}

// Release is what a Kubernetes release (a TKR of packages/tkr) names of Kubernetes' own images,
// which kubeadm runs on a node: each under ImageRepository, tagged as kubeadm tags them (the
// version with "+" replaced by "_").
type Release struct {
	// Version is the Kubernetes version, one of KubernetesVersions.
	Version string
	// EtcdTag, PauseTag and CoreDNSTag are the tags of the etcd, pause and CoreDNS images.
	EtcdTag, PauseTag, CoreDNSTag string
}

// ImageRepository is where TKG's releases name Kubernetes' images, and kubeadm's
// imageRepository on a node.
const ImageRepository = "projects.registry.vmware.com/tkg"

// LocalPathProvisionerImage is the provisioner of the default StorageClass on a cluster of real
// nodes, Rancher's local-path-provisioner under the name its project publishes it, as kind
// installs it; `make images` builds it from source.
const LocalPathProvisionerImage = "docker.io/rancher/local-path-provisioner:v0.0.30"

// Releases are the images of each of KubernetesVersions, as packages/tkr's values name them.
var Releases = []Release{
	{Version: "v1.35.4", EtcdTag: "v3.6.5_vmware.2", PauseTag: "3.10.1", CoreDNSTag: "v1.12.4_vmware.1"},
	{Version: "v1.34.3", EtcdTag: "v3.6.5_vmware.1", PauseTag: "3.10", CoreDNSTag: "v1.12.1_vmware.1"},
}

// ReleaseOf returns the images of a Kubernetes version, given as upstream's (v1.35.4) or as a
// TKR's Kubernetes version names it (v1.35.4+vmware.1).
func ReleaseOf(version string) (Release, error) {
	upstream, _, _ := strings.Cut(version, "+")
	for _, r := range Releases {
		if r.Version == upstream {
			return r, nil
		}
	}
	return Release{}, fmt.Errorf("unsupported Kubernetes version %q: use one of %s", version, strings.Join(KubernetesVersions, ", "))
}

// KubeadmVersion is the version kubeadm's ClusterConfiguration names, as TKG's build carries it.
func (r Release) KubeadmVersion() string { return r.Version + "+vmware.1" }

// PauseImage is the sandbox image containerd runs for every pod.
func (r Release) PauseImage() string { return ImageRepository + "/pause:" + r.PauseTag }

// DefaultKubernetesVersion is the version used when none is asked for.
func DefaultKubernetesVersion() string { return KubernetesVersions[0] }

// ErrMissing is wrapped by every error about a binary that is not built.
var ErrMissing = errors.New("upstream binaries are missing: run `make assets` (it builds them into bin/ from the Go module proxy; a cold build takes several minutes)")

// Set is the located assets directory.
type Set struct {
	// Dir holds k8s/<version>/ and etcd/<version>/.
	Dir string
}

// Find locates the assets directory: $SLIPWAY_ASSETS_DIR, the directory of the running
// executable (slipway installed as bin/slipway beside bin/k8s), or bin/ of the slipway source
// tree containing the working directory.
func Find() (Set, error) {
	if dir := os.Getenv(DirEnv); dir != "" {
		return Set{Dir: dir}, nil
	}
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		if isAssetsDir(dir) {
			return Set{Dir: dir}, nil
		}
	}
	if root, err := SourceRoot(); err == nil {
		return Set{Dir: filepath.Join(root, "bin")}, nil
	}
	return Set{}, fmt.Errorf("cannot find the assets directory: set %s or run from the slipway source tree: %w", DirEnv, ErrMissing)
}

// SourceRoot returns the root of the slipway source tree that contains the working directory.
func SourceRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/slipway-dev/slipway\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the slipway source tree")
		}
		dir = parent
	}
}

func isAssetsDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "etcd", EtcdVersion, Etcd))
	return err == nil
}

// Kubernetes returns the path of a Kubernetes binary of the given version, or an error saying
// how to get it. A version with build metadata, as a TKR's (v1.34.3+vmware.1), runs the
// upstream build of its release (v1.34.3).
func (s Set) Kubernetes(version, binary string) (string, error) {
	release, _, _ := strings.Cut(version, "+")
	if !slices.Contains(KubernetesVersions, release) {
		return "", fmt.Errorf("unsupported Kubernetes version %q: use one of %s", version, strings.Join(KubernetesVersions, ", "))
	}
	return s.existing(filepath.Join(s.Dir, "k8s", release, binary))
}

// EtcdPath returns the path of the etcd binary, or an error saying how to get it.
func (s Set) EtcdPath() (string, error) {
	return s.existing(filepath.Join(s.Dir, "etcd", EtcdVersion, Etcd))
}

func (s Set) existing(path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%s not found: %w", path, ErrMissing)
	}
	if info.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not executable: %w", path, ErrMissing)
	}
	return path, nil
}
