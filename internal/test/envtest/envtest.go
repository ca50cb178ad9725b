package envtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// Environment is a running API server with the CRDs installed.
type Environment struct {
	// Config reaches the API server as a cluster administrator.
	Config *rest.Config
	// Client is a client with slipway's scheme.
	Client client.Client
	// Scheme is slipway's scheme.
	Scheme *runtime.Scheme

	env    *crenvtest.Environment
	onStop []func()
}

// OnStop registers a function that runs before the API server stops, such as cancelling a
// manager whose watches would keep it from shutting down.
func (e *Environment) OnStop(f func()) { e.onStop = append(e.onStop, f) }

// Run starts the environment, hands it to setup, runs the package's tests and stops it. It
// returns the exit code for os.Exit. When the upstream binaries are missing it prints how to
// build them and fails. What setup starts (a manager) is stopped through Environment.OnStop.
func Run(m *testing.M, setup func(*Environment)) (code int) {
	env, err := Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "envtest: %v\n", err)
		return 1
	}
	defer func() {
		// A setup that panics must not leave its API servers running.
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "envtest: setup failed: %v\n", r)
			code = 1
		}
		for _, stop := range env.onStop {
			stop()
		}
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "envtest: failed to stop: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}()
	setup(env)
	return m.Run()
}

// Start starts kube-apiserver and etcd of the default Kubernetes version and installs the CRDs,
// but those of the directories in without (as CRDDirectories names them).
func Start(without ...string) (*Environment, error) {
	set, err := assets.Find()
	if err != nil {
		return nil, err
	}
	apiServer, err := set.Kubernetes(assets.DefaultKubernetesVersion(), assets.KubeAPIServer)
	if err != nil {
		return nil, err
	}
	etcd, err := set.EtcdPath()
	if err != nil {
		return nil, err
	}
	crdDirs, err := CRDDirectories()
	if err != nil {
		return nil, err
	}
	crdDirs = slices.DeleteFunc(crdDirs, func(dir string) bool { return slices.Contains(without, dir) })

	s := scheme.New()
	env := &crenvtest.Environment{
		Scheme: s,
		CRDInstallOptions: crenvtest.CRDInstallOptions{
			Paths:              crdDirs,
			ErrorIfPathMissing: true,
			Scheme:             s,
		},
		ControlPlane: crenvtest.ControlPlane{
			APIServer: &crenvtest.APIServer{Path: apiServer},
			Etcd:      &crenvtest.Etcd{Path: etcd},
		},
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("failed to start kube-apiserver and etcd: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("failed to create client: %w", err), env.Stop())
	}
	return &Environment{Config: cfg, Client: c, Scheme: s, env: env}, nil
}

// Stop stops kube-apiserver and etcd and removes their data.
func (e *Environment) Stop() error {
	return e.env.Stop()
}

// CRDDirectories lists the directories of every CRD the environment installs: slipway's
// generated CRDs (its own and kapp-controller's), those of Cluster API core, kubeadm bootstrap
// and kubeadm control plane, and those of the vSphere provider, taken from the modules go.mod pins.
func CRDDirectories() ([]string, error) {
	root, err := assets.SourceRoot()
	if err != nil {
		return nil, fmt.Errorf("failed to find slipway's CRDs: %w", err)
	}
	capi, err := ModuleDir(root, "sigs.k8s.io/cluster-api")
	if err != nil {
		return nil, err
	}
	capv, err := ModuleDir(root, "sigs.k8s.io/cluster-api-provider-vsphere")
	if err != nil {
		return nil, err
	}
	return []string{
		filepath.Join(root, "config", "crd", "bases"),
		CarvelCRDs(root),
		filepath.Join(root, "config", "crd", "core"),
		filepath.Join(capi, "config", "crd", "bases"),
		filepath.Join(capi, "bootstrap", "kubeadm", "config", "crd", "bases"),
		filepath.Join(capi, "controlplane", "kubeadm", "config", "crd", "bases"),
		filepath.Join(capv, "config", "default", "crd", "bases"),
	}, nil
}

// CarvelCRDs is the directory of kapp-controller's CRDs in slipway's source root, one of
// CRDDirectories.
func CarvelCRDs(root string) string { return filepath.Join(root, "config", "crd", "carvel") }

// ModuleDir returns the directory of a module that slipway's go.mod requires, downloading it if
// needed.
func ModuleDir(root, module string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("failed to locate module %s: %w: %s", module, err, stderr.String())
	}
	dir := strings.TrimSpace(stdout.String())
	if dir == "" {
		return "", fmt.Errorf("module %s is not downloaded: run `go mod download %s`", module, module)
	}
	return dir, nil
}
