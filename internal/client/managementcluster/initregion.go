package managementcluster

import (
	"context"
	"time"

	slipwayclient "github.com/slipway-dev/slipway/internal/client"
	"github.com/slipway-dev/slipway/internal/client/clusterctl"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Names TKG gives what it installs.
const (
	// ManagementRepository is the management package repository's name.
	ManagementRepository = "tanzu-management"
	// MetaPackage and MetaPackageRefName are tkg-pkg's PackageInstall and Package.
	MetaPackage        = "tkg-pkg"
	MetaPackageRefName = "tkg.tanzu.vmware.com"
	// KappControllerRefName is the package kapp-controller is rendered from.
	KappControllerRefName = "kapp-controller.tanzu.vmware.com"
	kappController        = "kapp-controller"
	// valuesFile is where kapp-controller's values are written beside its fetched bundle.
	valuesFile = "slipway-values.yml"
)

// Options are what Run takes.
type Options struct {
	// Kubeconfig and Context reach the cluster.
	Kubeconfig, Context string
	// WorkDir receives clusterctl's configuration.
	WorkDir string
	// Repository is the management package repository, as ReadRepository read it.
	Repository *Repository
	// InfrastructureProvider selects the Cluster API infrastructure provider clusterctl installs
	// and the ClusterClass package tkg-pkg installs: "local" (the default) or "vsphere".
	InfrastructureProvider string
	// ProviderVariables are the values of the providers' variables: CAPV's VSPHERE_USERNAME and
	// VSPHERE_PASSWORD.
	ProviderVariables map[string]string
	// Timeout bounds each wait: kapp-controller, each provider, each package.
	Timeout time.Duration
	// Progress prints TKG's progress lines.
	Progress *progress.Printer
	// Management says the cluster is the management cluster being made, not a bootstrap
	// cluster: only TKG's lines differ.
	Management bool
}

// target names the cluster in TKG's progress lines.
func (o Options) target() string {
	if o.Management {
		return "management cluster"
	}
	return "bootstrap cluster"
}

// Run installs the whole payload: kapp-controller, the providers, the management packages. It
// returns the TKG version of the tkg-pkg it installed. kapp-controller with the management
// package repository, and clusterctl's providers, need nothing of each other, so they are
// installed at once (TKG installs them one after the other); tkg-pkg, whose packages make Cluster
// API objects, waits for both, and the IPAM providers' wait goes on beside it.
func Run(ctx context.Context, o Options) (string, error) {
	c, err := slipwayclient.New(o.Kubeconfig, o.Context)
	if err != nil {
		return "", err
	}
	// The first failure of either install ends the other's work and is the one returned.
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	o.Progress.Infof("Installing kapp-controller on %s...", o.target())
	packaging := make(chan error, 1)
	go func() {
		// TKG's management kapp-controller takes tkg-system as its packaging global namespace:
		// the Packages of the TKRs there serve the clusters of every namespace.
		err := InstallKappController(ctx, c, o.Repository, tkg.SystemNamespace, o.Timeout, o.Progress)
		if err == nil {
			err = addManagementRepository(ctx, c, o)
		}
		if err != nil {
			fail(err)
		}
		packaging <- err
	}()
	target := "bootstrapper"
	if o.Management {
		target = o.target()
	}
	ipam, err := clusterctl.Init(ctx, clusterctl.InitOptions{
		Kubeconfig: o.Kubeconfig, Context: o.Context, Client: c, WorkDir: o.WorkDir, Timeout: o.Timeout,
		Progress: o.Progress, Target: target, Infrastructure: o.InfrastructureProvider, Variables: o.ProviderVariables,
		// The provider images run from beside the repository, as `make packages` locks them.
		Images: o.Repository.locked,
	})
	if err != nil {
		fail(err)
	}
	if perr := <-packaging; err != nil || perr != nil {
		if ipam != nil {
			_ = ipam()
		}
		return "", context.Cause(ctx)
	}
	version, err := installMetaPackage(ctx, c, o)
	if err != nil {
		// The IPAM providers' wait ends before Run does.
		fail(err)
		_ = ipam()
		return "", err
	}
	return version, ipam()
}
