package managementcluster

import (
	"context"
	"fmt"
	"time"

	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/client/clusterctl"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Upgrade is a planned upgrade of the management cluster: the release it moves to, and the
// management package repository its providers' versions, kapp-controller and management packages
// come from, with the TKG version that repository makes.
type Upgrade struct {
	cluster.Upgrade
	TKGVersion string
	Repository *Repository
	// Infrastructure is the clusterctl name of the infrastructure provider installed: local or
	// vsphere.
	Infrastructure string
	// KeepRelease says no newer release is available: the components are upgraded, the
	// management cluster stays on its release.
	KeepRelease bool
}

// UpgradeOptions are what PlanUpgrade takes.
type UpgradeOptions struct {
	// Name is the management cluster's; TKR the release asked for (a name or a prefix), or empty
	// for the newest available.
	Name, TKR string
	// PackageRepository is the management package repository to upgrade from; empty is the one
	// the management cluster was made from (its tanzu-management PackageRepository).
	PackageRepository string
}

// PlanUpgrade chooses the release the management cluster upgrades to, as cluster.PlanUpgrade
// does for a workload cluster (its own when none is newer and none was asked for), and reads the
// package repository it upgrades from, before anything changes.
func PlanUpgrade(ctx context.Context, c client.Client, o UpgradeOptions) (*Upgrade, error) {
	key := client.ObjectKey{Namespace: tkg.SystemNamespace, Name: o.Name}
	u, err := cluster.PlanUpgrade(ctx, c, key, o.TKR)
	keep := false
	if cluster.IsNoUpgrades(err) && o.TKR == "" {
		u, err = currentRelease(ctx, c, key)
		keep = true
	}
	if err != nil {
		return nil, err
	}
	repository, err := readManagementRepository(ctx, c, o.PackageRepository)
	if err != nil {
		return nil, err
	}
	version, err := repository.TKGVersion()
	if err != nil {
		return nil, err
	}
	providers, err := clusterctl.InstalledProviders(ctx, c)
	if err != nil {
		return nil, err
	}
	var infrastructure string
	for _, p := range providers {
		if clusterctlv1.ProviderType(p.Type) == clusterctlv1.InfrastructureProviderType {
			infrastructure = p.ProviderName
		}
	}
	if infrastructure == "" {
		return nil, fmt.Errorf("management cluster %s has no infrastructure provider installed by clusterctl: was it made by `slipway management-cluster create`?", o.Name)
	}
	return &Upgrade{Upgrade: *u, TKGVersion: version, Repository: repository, Infrastructure: infrastructure, KeepRelease: keep}, nil
}

// readManagementRepository reads the management package repository ref names; empty is the one
// the management cluster c was made from (its tanzu-management PackageRepository: a copy's when
// TKG_CUSTOM_IMAGE_REPOSITORY made it). Its registry is trusted as the management cluster's
// kapp-controller trusts it.
func readManagementRepository(ctx context.Context, c client.Client, ref string) (*Repository, error) {
	if ref == "" {
		repo := &pkgingv1alpha1.PackageRepository{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: tkg.SystemNamespace, Name: ManagementRepository}, repo); err != nil {
			return nil, fmt.Errorf("failed to read the management cluster's package repository %s/%s (or give --package-repository): %w", tkg.SystemNamespace, ManagementRepository, err)
		}
		if repo.Spec.Fetch == nil || repo.Spec.Fetch.ImgpkgBundle == nil || repo.Spec.Fetch.ImgpkgBundle.Image == "" {
			return nil, fmt.Errorf("package repository %s/%s names no imgpkg bundle: give --package-repository", tkg.SystemNamespace, ManagementRepository)
		}
		ref = repo.Spec.Fetch.ImgpkgBundle.Image
	}
	trust, err := (&fetch.ConfigTrust{Client: c, Key: client.ObjectKey{Namespace: tkg.SystemNamespace, Name: fetch.KappControllerConfig}, Secret: true}).Trust(ctx)
	if err != nil {
		return nil, err
	}
	return ReadRepository(ctx, ref, trust)
}

// currentRelease is the release the management cluster is on, as an upgrade that keeps it.
func currentRelease(ctx context.Context, c client.Client, key client.ObjectKey) (*cluster.Upgrade, error) {
	mc := &clusterv1.Cluster{}
	if err := c.Get(ctx, key, mc); err != nil {
		return nil, fmt.Errorf("failed to get management Cluster %s: %w", key, err)
	}
	name := mc.Labels[runv1alpha3.LabelTKR]
	if name == "" {
		return nil, fmt.Errorf("management Cluster %s has no %s label: the TKR service has not resolved its release", key, runv1alpha3.LabelTKR)
	}
	release := &runv1alpha3.TanzuKubernetesRelease{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, release); err != nil {
		return nil, fmt.Errorf("failed to get TanzuKubernetesRelease %s, the release of management Cluster %s: %w", name, key, err)
	}
	return &cluster.Upgrade{TKR: name, Version: release.Spec.Version, Kubernetes: release.Spec.Kubernetes.Version}, nil
}

// Prompt is TKG's question before the upgrade.
func (u *Upgrade) Prompt(name string) string {
	return fmt.Sprintf("Upgrading management cluster '%s' to TKG version '%s' with Kubernetes version '%s'. Are you sure?", name, u.TKGVersion, u.Kubernetes)
}

// RunOptions are how RunUpgrade reaches the management cluster.
type RunOptions struct {
	// Kubeconfig and Context reach it, for clusterctl; Client for the rest.
	Kubeconfig, Context string
	Client              client.Client
	// WorkDir receives clusterctl's configuration.
	WorkDir  string
	Timeout  time.Duration
	Progress *progress.Printer
}

// RunUpgrade upgrades the management cluster as TKG does: the providers the repository holds
// newer versions of, kapp-controller, the management packages, then, unless no newer one is
// available, its Kubernetes release as a workload cluster's, which its own controllers do,
// running on the machines they replace.
func RunUpgrade(ctx context.Context, name string, u *Upgrade, o RunOptions) error {
	p := o.Progress
	key := client.ObjectKey{Namespace: tkg.SystemNamespace, Name: name}
	var version string
	mc := &clusterv1.Cluster{}
	err := p.Run(ctx,
		progress.NamedStep{Name: "providers", Run: func(ctx context.Context) error {
			p.Infof("Upgrading management cluster providers...")
			if err := clusterctl.UpgradeProviders(ctx, clusterctl.UpgradeOptions{Kubeconfig: o.Kubeconfig, Context: o.Context, Client: o.Client,
				WorkDir: o.WorkDir, Timeout: o.Timeout, Progress: p}); err != nil {
				return fmt.Errorf("failed to upgrade management cluster providers: %w", err)
			}
			p.Infof("Management cluster providers upgraded successfully...")
			return nil
		}},
		progress.NamedStep{Name: "kapp-controller", Run: func(ctx context.Context) error {
			p.Infof("Upgrading kapp-controller...")
			if err := InstallKappController(ctx, o.Client, u.Repository, tkg.SystemNamespace, o.Timeout, p); err != nil {
				return fmt.Errorf("unable to upgrade kapp-controller: %w", err)
			}
			return nil
		}},
		progress.NamedStep{Name: "management components", Run: func(ctx context.Context) error {
			p.Infof("Upgrading management components...")
			var err error
			if version, err = InstallManagementPackages(ctx, o.Client, Options{Repository: u.Repository,
				InfrastructureProvider: u.Infrastructure, Timeout: o.Timeout, Progress: p, Management: true}); err != nil {
				return fmt.Errorf("unable to upgrade management components: %w", err)
			}
			return nil
		}},
		progress.NamedStep{Name: "kubernetes release", Run: func(ctx context.Context) error {
			if u.KeepRelease {
				p.Infof("Management cluster kubernetes version %s (release %s) is the newest available: it stays", u.Kubernetes, u.TKR)
				return nil
			}
			p.Infof("Upgrading management cluster kubernetes version...")
			return cluster.RunUpgrade(ctx, o.Client, key, &u.Upgrade, o.Timeout, p)
		}},
		progress.NamedStep{Name: "record TKG version", Run: func(ctx context.Context) error {
			if err := o.Client.Get(ctx, key, mc); err != nil {
				return fmt.Errorf("failed to get management Cluster %s: %w", key, err)
			}
			before := mc.DeepCopy()
			if mc.Annotations == nil {
				mc.Annotations = map[string]string{}
			}
			mc.Annotations[tkg.AnnotationTKGVersion] = version
			if err := o.Client.Patch(ctx, mc, client.MergeFrom(before)); err != nil {
				return fmt.Errorf("failed to record TKG version %s on management Cluster %s: %w", version, key, err)
			}
			return nil
		}},
	)
	if err != nil {
		return err
	}
	publishMetadata(ctx, p, o.Client, u.Repository, name, mc.Annotations[tkg.AnnotationPlan], u.Infrastructure, "upgraded")
	p.Infof("Management cluster '%s' successfully upgraded to TKG version '%s' with kubernetes version '%s'", name, version, u.Kubernetes)
	return nil
}
