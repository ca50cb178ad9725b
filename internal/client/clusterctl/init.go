// Package clusterctl installs Cluster API on a cluster as TKG does, with clusterctl's library:
// cert-manager, the core, kubeadm bootstrap and kubeadm control plane providers and an
// infrastructure provider, from the local provider repository `make providers` builds
// (hack/clusterctl-repo), so that nothing is fetched from the internet.
package clusterctl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	clusterctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	clusterctllog "sigs.k8s.io/cluster-api/cmd/clusterctl/log"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/progress"
)

// Versions of what the repository holds.
const (
	// ModulePath and Version are the Cluster API module the core, kubeadm bootstrap and kubeadm
	// control plane components are built from; keep Version in step with go.mod.
	ModulePath = "sigs.k8s.io/cluster-api"
	Version    = "v1.13.4"
	// CAPVModule and CAPVVersion are the vSphere infrastructure provider's; keep CAPVVersion in
	// step with go.mod.
	CAPVModule  = "sigs.k8s.io/cluster-api-provider-vsphere"
	CAPVVersion = "v1.16.1"
	// LocalVersion is the local infrastructure provider's release; its metadata maps the 0.1
	// series to Cluster API's v1beta2 contract.
	LocalVersion = "v0.1.0"
	// CertManagerVersion is upstream cert-manager's release the repository holds, built by `make
	// images` from the module hack/images/cert-manager/go.mod requires, where the version is
	// chosen (hack/images' test reads this version back from each binary, and the Makefile the
	// manifest's from go.mod); v1.11 is the newest whose binaries build from modules the Go
	// module proxy serves.
	CertManagerVersion = "v1.11.5"
	CertManagerName    = "cert-manager"
	CertManagerFile    = "cert-manager.yaml"
	// LocalInfrastructure is the local provider's directory (clusterctl's provider label).
	LocalInfrastructure = "infrastructure-local"
	// VSphereInfrastructure is CAPV's directory (clusterctl's provider label).
	VSphereInfrastructure = "infrastructure-vsphere"
	// IPAMInCluster is the in-cluster IPAM provider's directory (clusterctl's provider label):
	// TKG's caip-in-cluster, upstream's provider built by `make images`.
	IPAMInCluster = "ipam-in-cluster"
	// IPAMModule and IPAMVersion are the in-cluster IPAM provider's; keep IPAMVersion in step with
	// hack/images (its module, hack/images/ipam-in-cluster, builds it).
	IPAMModule  = "sigs.k8s.io/cluster-api-ipam-provider-in-cluster"
	IPAMVersion = "v1.1.0"
	// RepositoryDir is the repository's directory in the assets directory (bin/).
	RepositoryDir = "clusterctl-repo"
)

// LocalMetadata is the clusterctl metadata of slipway's own provider, local.
const LocalMetadata = `apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3
kind: Metadata
releaseSeries:
- major: 0
  minor: 1
  contract: v1beta2
`

// CertManagerMetadata is cert-manager's clusterctl metadata.
const CertManagerMetadata = `apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3
kind: Metadata
releaseSeries:
- major: 1
  minor: 11
  contract: v1beta2
`

// Provider is one provider of the repository.
type Provider struct {
	// Name is clusterctl's provider label and the repository directory: cluster-api,
	// bootstrap-kubeadm, control-plane-kubeadm, infrastructure-local.
	Name string
	// ClusterctlName and Type are how clusterctl's configuration names it.
	ClusterctlName, Type string
	Version              string
	// Module is the Go module whose kustomization (KustomizeDir) and metadata.yaml the
	// components come from, at Version; empty for slipway's own providers, built from
	// KustomizeDir in slipway's source tree with LocalMetadata.
	Module         string
	KustomizeDir   string
	ComponentsFile string
	// StagingImage is the image the kustomization names, replaced by Image, the release's.
	// Image is what the provider's Deployment runs, by tag; the repository locks it by digest.
	StagingImage, Image string
	// UpstreamPrefix, when set, is the prefix the module's kustomizations give every name and
	// the namespace (<prefix>system); Prefix replaces it in all of them, as TKG names a provider
	// it builds from upstream (caip-in-cluster).
	UpstreamPrefix, Prefix string
}

// CertManagerImages are the images of cert-manager's Deployments, by tag.
var CertManagerImages = []string{
	"quay.io/jetstack/cert-manager-cainjector:" + CertManagerVersion,
	"quay.io/jetstack/cert-manager-controller:" + CertManagerVersion,
	"quay.io/jetstack/cert-manager-webhook:" + CertManagerVersion,
}

// Providers are the providers of the repository: Cluster API's core, kubeadm bootstrap and
// control plane, the infrastructure providers `local` (slipway's) and `vsphere` (CAPV), and the
// in-cluster IPAM provider (upstream's, in TKG's namespace). A bootstrap or management cluster gets one
// infrastructure provider (InitOptions.Infrastructure) and all the others.
func Providers() []Provider {
	return []Provider{
		{Name: "cluster-api", ClusterctlName: "cluster-api", Type: "CoreProvider", Version: Version, Module: ModulePath, KustomizeDir: "config/default",
			ComponentsFile: "core-components.yaml", StagingImage: "gcr.io/k8s-staging-cluster-api/cluster-api-controller:main",
			Image: "registry.k8s.io/cluster-api/cluster-api-controller:" + Version},
		{Name: "bootstrap-kubeadm", ClusterctlName: "kubeadm", Type: "BootstrapProvider", Version: Version, Module: ModulePath, KustomizeDir: "bootstrap/kubeadm/config/default",
			ComponentsFile: "bootstrap-components.yaml", StagingImage: "gcr.io/k8s-staging-cluster-api/kubeadm-bootstrap-controller:main",
			Image: "registry.k8s.io/cluster-api/kubeadm-bootstrap-controller:" + Version},
		{Name: "control-plane-kubeadm", ClusterctlName: "kubeadm", Type: "ControlPlaneProvider", Version: Version, Module: ModulePath, KustomizeDir: "controlplane/kubeadm/config/default",
			ComponentsFile: "control-plane-components.yaml", StagingImage: "gcr.io/k8s-staging-cluster-api/kubeadm-control-plane-controller:main",
			Image: "registry.k8s.io/cluster-api/kubeadm-control-plane-controller:" + Version},
		{Name: LocalInfrastructure, ClusterctlName: "local", Type: "InfrastructureProvider", Version: LocalVersion,
			KustomizeDir: "config/infrastructure-local", ComponentsFile: "infrastructure-components.yaml", Image: "ghcr.io/slipway-dev/capl-controller:" + LocalVersion},
		{Name: VSphereInfrastructure, ClusterctlName: "vsphere", Type: "InfrastructureProvider", Version: CAPVVersion, Module: CAPVModule, KustomizeDir: "config/default",
			ComponentsFile: "infrastructure-components.yaml", StagingImage: "gcr.io/k8s-staging-capi-vsphere/cluster-api-vsphere-controller:main",
			Image: "registry.k8s.io/capi-vsphere/cluster-api-vsphere-controller:" + CAPVVersion},
		{Name: IPAMInCluster, ClusterctlName: "in-cluster", Type: "IPAMProvider", Version: IPAMVersion, Module: IPAMModule, KustomizeDir: "config/default",
			ComponentsFile: "ipam-components.yaml", StagingImage: "gcr.io/k8s-staging-capi-ipam-ic/cluster-api-ipam-in-cluster-controller:dev",
			Image:          "registry.k8s.io/capi-ipam-ic/cluster-api-ipam-in-cluster-controller:" + IPAMVersion,
			UpstreamPrefix: "capi-ipam-in-cluster-", Prefix: "caip-in-cluster-"},
	}
}

// Repository returns the local provider repository in the assets directory.
func Repository() (string, error) {
	set, err := assets.Find()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(set.Dir, RepositoryDir)
	for _, p := range Providers() {
		if _, err := os.Stat(filepath.Join(dir, p.Name, p.Version, p.ComponentsFile)); err != nil {
			return "", fmt.Errorf("the clusterctl provider repository is missing %s %s: run `make providers` (it builds %s from the Go module cache)", p.Name, p.Version, dir)
		}
	}
	return dir, nil
}

// Config writes the clusterctl configuration that points at the repository into dir and returns
// its path: every provider's URL, cert-manager's, ClusterTopology on, and an image override for
// each provider image located elsewhere than its name says (images maps an image by tag to where
// it is, by digest).
func Config(repo, dir string, images map[string]string) (string, error) {
	type providerConfig struct {
		Name string `json:"name"`
		URL  string `json:"url"`
		Type string `json:"type"`
	}
	cfg := map[string]any{
		"CLUSTER_TOPOLOGY":                "true",
		"EXP_MACHINE_POOL":                "false",
		"CLUSTERCTL_DISABLE_VERSIONCHECK": "true",
		"cert-manager": map[string]string{
			"url":     filepath.Join(repo, CertManagerName, CertManagerVersion, CertManagerFile),
			"version": CertManagerVersion,
		},
	}
	var providers []providerConfig
	for _, p := range Providers() {
		providers = append(providers, providerConfig{Name: p.ClusterctlName, Type: p.Type, URL: filepath.Join(repo, p.Name, p.Version, p.ComponentsFile)})
	}
	cfg["providers"] = providers
	overrides, err := imageOverrides(images)
	if err != nil {
		return "", err
	}
	if len(overrides) > 0 {
		cfg["images"] = overrides
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "clusterctl.yaml")
	return path, os.WriteFile(path, data, 0o600)
}

// imageOverride is one entry of clusterctl's `images` configuration.
type imageOverride struct {
	Repository string `json:"repository"`
	Name       string `json:"name"`
}

// imageOverrides are clusterctl's overrides (`<provider label>/<image name>`) that make each
// provider image that images locates run from there: `make packages` locks the provider images
// beside the management package repository, where imgpkg copy relocates them with it. The digest
// the components lock stays, and names the same image wherever it is.
func imageOverrides(images map[string]string) (map[string]imageOverride, error) {
	overrides := map[string]imageOverride{}
	add := func(label, image string) error {
		at, ok := images[image]
		if !ok {
			return nil
		}
		repository, _, _ := strings.Cut(at, "@")
		i := strings.LastIndex(repository, "/")
		if i < 0 {
			return fmt.Errorf("image %s is at %s, which names no registry", image, at)
		}
		overrides[label+"/"+imageName(image)] = imageOverride{Repository: repository[:i], Name: repository[i+1:]}
		return nil
	}
	for _, p := range Providers() {
		if err := add(p.Name, p.Image); err != nil {
			return nil, err
		}
	}
	for _, image := range CertManagerImages {
		if err := add(CertManagerName, image); err != nil {
			return nil, err
		}
	}
	return overrides, nil
}

// imageName is the last element of an image's repository: cluster-api-controller for
// registry.k8s.io/cluster-api/cluster-api-controller:v1.13.4.
func imageName(image string) string {
	image, _, _ = strings.Cut(image, "@")
	image = image[strings.LastIndex(image, "/")+1:]
	name, _, _ := strings.Cut(image, ":")
	return name
}

// InitOptions are what Init takes.
type InitOptions struct {
	// Kubeconfig and Context reach the cluster, for clusterctl; Client reaches it for the waits.
	Kubeconfig, Context string
	Client              client.Client
	// WorkDir receives the clusterctl configuration.
	WorkDir string
	// Timeout bounds the wait for the providers.
	Timeout time.Duration
	// Progress prints TKG's progress lines and clusterctl's own log.
	Progress *progress.Printer
	// Target names the cluster in the progress lines; empty is "bootstrapper", as TKG says.
	Target string
	// Infrastructure is the clusterctl name of the infrastructure provider to install: "local"
	// (the default) or "vsphere".
	Infrastructure string
	// Variables are the values of the components' variables (CAPV's VSPHERE_USERNAME and
	// VSPHERE_PASSWORD), given to clusterctl in memory, never written to its configuration file.
	Variables map[string]string
	// Images maps provider images by tag to where they are, by digest (the management package
	// repository's lock); the providers run them from there. Those it does not name run as the
	// repository names them.
	Images map[string]string
}

// Init runs clusterctl init with every provider of the repository, then waits for each provider's
// Deployments as TKG's WaitForProviders does, printing TKG's lines. It returns once the providers
// that serve Cluster API's own objects (core, bootstrap, control plane, infrastructure) are
// available. The IPAM providers, which serve only IP pools and the claims of machines that use
// them, may take longer (upstream's in-cluster provider waits for its webhook's certificate and
// is first probed 5 s after it starts): their wait goes on in ctx, so that the caller can install
// what needs only the others meanwhile, and the function Init returns waits for its end. Call it
// before anything uses an IP pool, and before returning (cancel ctx first to end the wait).
func Init(ctx context.Context, opts InitOptions) (func() error, error) {
	infra := cmp.Or(opts.Infrastructure, "local")
	if !slices.ContainsFunc(Providers(), func(p Provider) bool { return p.Type == "InfrastructureProvider" && p.ClusterctlName == infra }) {
		return nil, fmt.Errorf("unknown infrastructure provider %q: slipway installs local or vsphere", infra)
	}
	c, err := newClient(ctx, opts.WorkDir, opts.Progress, opts.Variables, opts.Images)
	if err != nil {
		return nil, err
	}
	init := clusterctlclient.InitOptions{
		Kubeconfig: clusterctlclient.Kubeconfig{Path: opts.Kubeconfig, Context: opts.Context},
		// clusterctl waits for every provider at once; TKG waits for each and says so.
		WaitProviders: false,
	}
	for _, p := range Providers() {
		ref := p.ClusterctlName + ":" + p.Version
		switch p.Type {
		case "CoreProvider":
			init.CoreProvider = ref
		case "BootstrapProvider":
			init.BootstrapProviders = append(init.BootstrapProviders, ref)
		case "ControlPlaneProvider":
			init.ControlPlaneProviders = append(init.ControlPlaneProviders, ref)
		case "InfrastructureProvider":
			if p.ClusterctlName == infra {
				init.InfrastructureProviders = append(init.InfrastructureProviders, ref)
			}
		case "IPAMProvider":
			init.IPAMProviders = append(init.IPAMProviders, ref)
		}
	}
	if opts.Target == "" {
		opts.Target = "bootstrapper"
	}
	opts.Progress.Infof("Installing providers on %s...", opts.Target)
	components, err := c.Init(ctx, init)
	if err != nil {
		return nil, fmt.Errorf("failed to install providers: %w", err)
	}
	var providers []installed
	for _, comp := range components {
		providers = append(providers, installed{name: comp.ManifestLabel(), namespace: comp.TargetNamespace(),
			later: comp.Type() == clusterctlv1.IPAMProviderType})
	}
	return waitForProviders(ctx, opts.Client, providers, opts.Timeout, opts.Progress)
}

// newClient returns clusterctl's client of the local provider repository, with its
// configuration in workDir, the variables given and its log printed through p.
func newClient(ctx context.Context, workDir string, p *progress.Printer, variables, images map[string]string) (clusterctlclient.Client, error) {
	repo, err := Repository()
	if err != nil {
		return nil, err
	}
	cfgPath, err := Config(repo, workDir, images)
	if err != nil {
		return nil, err
	}
	clusterctllog.SetLogger(p.Logger())
	cfg, err := clusterctlconfig.New(ctx, cfgPath)
	if err != nil {
		return nil, fmt.Errorf("failed to read the clusterctl configuration: %w", err)
	}
	for k, v := range variables {
		cfg.Variables().Set(k, v)
	}
	c, err := clusterctlclient.New(ctx, cfgPath, clusterctlclient.InjectConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("failed to create the clusterctl client: %w", err)
	}
	return c, nil
}

// installed is a provider clusterctl installed: its manifest label and namespace, and whether
// its wait may go on after Init returns (later).
type installed struct {
	name, namespace string
	later           bool
}

// waitForProviders waits, in parallel, until every Deployment of each provider (labelled
// cluster.x-k8s.io/provider=<name>) is available, printing when each one is. It returns once
// every provider but the later ones is available; the function it returns waits for the later
// ones too, and TKG's last line is printed when all are available. When one of the others fails,
// it stops the later ones' wait and returns the failure once every wait has ended.
func waitForProviders(ctx context.Context, c client.Client, providers []installed, timeout time.Duration, out *progress.Printer) (func() error, error) {
	for _, p := range providers {
		out.Infof("Waiting for provider %s", p.name)
	}
	ctx, stop := context.WithCancel(ctx)
	start := time.Now()
	errs := make([]error, len(providers))
	var now, all sync.WaitGroup
	for i, p := range providers {
		all.Add(1)
		if !p.later {
			now.Add(1)
		}
		go func() {
			defer all.Done()
			if !p.later {
				defer now.Done()
			}
			if errs[i] = waitForProvider(ctx, c, p, timeout); errs[i] == nil {
				out.Infof("Passed waiting on provider %s after %s", p.name, time.Since(start))
			}
		}()
	}
	done := make(chan error, 1)
	go func() {
		all.Wait()
		stop()
		err := errors.Join(errs...)
		if err == nil {
			out.Infof("Success waiting on all providers.")
		}
		done <- err
	}()
	rest := sync.OnceValue(func() error {
		if err := <-done; err != nil {
			return fmt.Errorf("failed waiting for providers: %w", err)
		}
		return nil
	})
	now.Wait()
	var failed []error
	for i, p := range providers {
		if !p.later {
			failed = append(failed, errs[i])
		}
	}
	if err := errors.Join(failed...); err != nil {
		stop()
		_ = rest()
		return nil, fmt.Errorf("failed waiting for providers: %w", err)
	}
	return rest, nil
}

// waitForProvider waits until every Deployment of the provider is available, saying why not when
// it gives up.
func waitForProvider(ctx context.Context, c client.Client, p installed, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = providerNotAvailable(ctx, c, p)
		return last == "", nil
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("the wait for provider %s was stopped: %s", p.name, last)
	default:
		return fmt.Errorf("provider %s is not available after %s: %s", p.name, timeout, last)
	}
}

// providerNotAvailable says why a provider is not available yet, or "" when every Deployment of
// it is.
func providerNotAvailable(ctx context.Context, c client.Client, p installed) string {
	deployments := &appsv1.DeploymentList{}
	if err := c.List(ctx, deployments, client.InNamespace(p.namespace), client.MatchingLabels{clusterv1.ProviderNameLabel: p.name}); err != nil {
		return err.Error()
	}
	if len(deployments.Items) == 0 {
		return fmt.Sprintf("no Deployment labelled %s=%s in namespace %s", clusterv1.ProviderNameLabel, p.name, p.namespace)
	}
	for _, d := range deployments.Items {
		want := ptr.Deref(d.Spec.Replicas, 1)
		if d.Status.ObservedGeneration < d.Generation || d.Status.AvailableReplicas < want {
			why := fmt.Sprintf("deployment %s/%s has %d of %d replicas available", d.Namespace, d.Name, d.Status.AvailableReplicas, want)
			if held := hostLimitOfPods(ctx, c, &d); held != "" {
				why += ": " + held
			}
			return why
		}
	}
	return ""
}

// hostLimitOfPods returns what a container of the Deployment's pods last ended on when that
// was a host limit (the local runtime's node says so in the container's termination message),
// or "".
func hostLimitOfPods(ctx context.Context, c client.Client, d *appsv1.Deployment) string {
	if d.Spec.Selector == nil {
		return ""
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(d.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		return ""
	}
	for _, p := range pods.Items {
		for _, s := range p.Status.ContainerStatuses {
			if t := s.LastTerminationState.Terminated; t != nil && strings.HasPrefix(t.Message, "host limit reached") {
				return fmt.Sprintf("pod %s container %s: %s", p.Name, s.Name, t.Message)
			}
		}
	}
	return ""
}
