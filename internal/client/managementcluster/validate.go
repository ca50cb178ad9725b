package managementcluster

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/client/clusterctl"
	clientvsphere "github.com/slipway-dev/slipway/internal/client/vsphere"
	"github.com/slipway-dev/slipway/internal/config"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/hostnet"
	"github.com/slipway-dev/slipway/internal/tkg"
	"github.com/slipway-dev/slipway/internal/vsphere/prerequisites"
)

// validate reads and completes the configuration and checks what the run needs before
// anything starts: the assets, the provider and package repositories, the release, the name.
func (f *flow) validate(ctx context.Context) error {
	v, err := config.Read(f.o.File, f.o.Environ)
	if err != nil {
		return err
	}
	for name, value := range f.o.Set {
		v.Set(name, value)
	}
	for _, n := range v.Unknown() {
		f.p.Infof("Warning: %s: it is ignored", config.NotKnown(n))
	}
	f.cfg, err = config.Complete(v, config.Management, config.Defaults{KubernetesVersion: assets.DefaultKubernetesVersion(), Now: f.o.Now()}, f.p.Infof)
	if err != nil {
		return err
	}
	for _, n := range f.cfg.Notes {
		f.p.Infof("Warning: %s", n)
	}
	if f.cfg.Identity == nil {
		// TKG's words (seeds/000), for IDENTITY_MANAGEMENT_TYPE none.
		f.p.Infof("Identity Provider not configured. Some authentication features won't work.")
	}
	f.vars = v
	if !f.o.DryRun && f.o.Home != "" {
		if err := f.p.Audit(cluster.AuditLog(f.o.Home, f.cfg.Name)); err != nil {
			return err
		}
	}
	if _, err := clusterctl.Repository(); err != nil {
		return err
	}
	// The local runtime runs its own Kubernetes versions; then each cluster the flow starts needs
	// a real node's images (checked against the registry, so not on a dry run).
	version, _, _ := strings.Cut(f.cfg.KubernetesVersion, "+")
	if f.cfg.InfrastructureProvider == "local" && !slices.Contains(assets.KubernetesVersions, version) {
		return fmt.Errorf("invalid %s %q for the local infrastructure provider: the local runtime runs %s",
			config.KubernetesVersion, f.cfg.KubernetesVersion, strings.Join(assets.KubernetesVersions, ", "))
	}
	if f.o.UseExistingBootstrap == "" && !f.o.DryRun {
		if _, err := f.o.Store.EnsureNodeImage(ctx, assets.DefaultKubernetesVersion()); err != nil {
			return fmt.Errorf("the bootstrap cluster cannot start: %w", err)
		}
		if _, _, err := localcluster.ResolveEgress(f.bootstrapEgress()); err != nil {
			return fmt.Errorf("the bootstrap cluster's nodes cannot reach the vCenter or the control-plane endpoint through this host: %w: set %s and %s to addresses of other hosts, or names of them",
				err, config.VSphereServer, config.VSphereControlPlaneEndpoint)
		}
	}
	if path := f.o.UseExistingBootstrap; path != "" && !f.o.DryRun {
		cfg, err := clientcmd.LoadFromFile(path)
		if err != nil {
			return fmt.Errorf("-e (--use-existing-bootstrap-cluster) with --kubeconfig %s: %w", path, err)
		}
		if err := checkReach(f.o.Store, "-e (--use-existing-bootstrap-cluster) with --kubeconfig", path, cfg.CurrentContext, f.bootstrapDestinations()); err != nil {
			return err
		}
	}
	if f.cfg.InfrastructureProvider == "local" {
		if !f.o.DryRun {
			if _, err := f.o.Store.EnsureNodeImage(ctx, version); err != nil {
				return fmt.Errorf("the management cluster's nodes cannot start on this host: %w", err)
			}
		}
		if _, err := f.o.Store.Get(f.cfg.Name); err == nil {
			return fmt.Errorf("cluster name %s matches a local cluster that exists: choose another %s, or delete it with `slipway local cluster delete %s`",
				f.cfg.Name, config.ClusterName, f.cfg.Name)
		}
	}
	// The nodes this host starts: the bootstrap cluster's, and the management cluster's on the
	// local provider, which run together until the bootstrap cluster is deleted.
	var controlPlanes, workers int
	if f.o.UseExistingBootstrap == "" {
		controlPlanes++
	}
	if f.cfg.InfrastructureProvider == "local" {
		controlPlanes += f.cfg.ControlPlaneMachineCount
		workers += f.cfg.WorkerMachineCount
	}
	if controlPlanes > 0 && !f.o.DryRun {
		if err := f.o.Store.CheckHostLimits(controlPlanes, workers, func(msg string) { f.p.Infof("%s", msg) }); err != nil {
			return err
		}
	}
	if cfg, err := clientcmd.LoadFromFile(f.kubeconfigPath()); err == nil {
		if _, ok := cfg.Contexts[ContextName(f.cfg.Name)]; ok {
			return fmt.Errorf("cluster name %s matches another management cluster: its context %s is in %s; choose another %s, or remove the context",
				f.cfg.Name, ContextName(f.cfg.Name), f.kubeconfigPath(), config.ClusterName)
		}
	}
	custom, _ := v.Get(config.CustomImageRepository)
	if f.hostRegistries, err = f.customRegistries(custom); err != nil {
		return err
	}
	if f.o.PackageRepository, err = PackageRepositoryOf(f.o.PackageRepository, custom); err != nil {
		return err
	}
	if f.repo, err = ReadRepository(ctx, f.o.PackageRepository, f.cfg.Nodes.RegistryTrust()); err != nil {
		return err
	}
	releases := f.repo.Releases()
	i := slices.IndexFunc(releases, func(r string) bool { return tkg.ReleaseOf(r, f.cfg.KubernetesVersion) })
	if i < 0 {
		return fmt.Errorf("invalid %s %q: the package repository %s has no Kubernetes release of it: use one of %s",
			config.KubernetesVersion, f.cfg.KubernetesVersion, f.o.PackageRepository, strings.Join(releases, ", "))
	}
	// A release's name is its version with '+' spelt "---", as TKG names them.
	f.tkrName = tkg.VersionLabel(releases[i])
	if f.cfg.VSphere != nil {
		// No cluster holds the release yet: its node image is named as the catalogue names it.
		image, err := clientvsphere.ReleaseImage(releases[i], f.cfg)
		if err != nil {
			return err
		}
		if err := cluster.CheckVSphere(ctx, f.cfg, true, releases[i], []prerequisites.Image{image}, nil, f.o.AcceptThumbprint, f.p.Infof); err != nil {
			return err
		}
		// A thumbprint accepted where TKG prompts is saved with the configuration.
		if tp := f.cfg.VSphere.TLSThumbprint; tp != "" {
			f.vars.Set(config.VSphereTLSThumbprint, tp)
		}
	}
	return nil
}

// customRegistries returns the registry of a custom image repository, which the bootstrap
// cluster's nodes and the management cluster's pull from: one on this host's loopback that
// answers on the bridge address too, since a node reaches no registry off this host. On vSphere
// the management cluster's VMs must boot on this host too (its endpoint in the bridge's block for
// them, as the simulator's VMs), where they reach the copy as TKR_DATA names it.
func (f *flow) customRegistries(custom string) ([]string, error) {
	if custom == "" {
		return nil, nil
	}
	if vs := f.cfg.VSphere; vs != nil {
		if ip, err := netip.ParseAddr(vs.ControlPlaneEndpoint); err != nil || !hostnet.EndpointBlock.Contains(ip) {
			return nil, fmt.Errorf("%s %s: %s %q is not in %s, so the management cluster's VMs do not boot on this host and cannot reach a copy here, and a bootstrap cluster reaches no registry off this host: unset %s",
				config.CustomImageRepository, custom, config.VSphereControlPlaneEndpoint, vs.ControlPlaneEndpoint, hostnet.EndpointBlock, config.CustomImageRepository)
		}
	}
	registry, err := localcluster.HostRegistry(config.CustomImageRepository, custom)
	if err != nil {
		return nil, err
	}
	if !f.o.DryRun {
		if err := localcluster.CheckHostRegistries(config.CustomImageRepository, []string{registry}); err != nil {
			return nil, err
		}
	}
	return []string{registry}, nil
}
