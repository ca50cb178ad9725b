package clusterctl

import (
	"context"
	"fmt"
	"time"

	"github.com/blang/semver/v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/config"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// InstalledProviders lists the providers clusterctl installed on a cluster, from its Provider
// inventory.
func InstalledProviders(ctx context.Context, c client.Client) ([]clusterctlv1.Provider, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(clusterctlv1.GroupVersion.WithKind("ProviderList"))
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("failed to list clusterctl Providers: %w", err)
	}
	providers := make([]clusterctlv1.Provider, len(list.Items))
	for i, u := range list.Items {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &providers[i]); err != nil {
			return nil, fmt.Errorf("failed to read Provider %s: %w", klog.KObj(&u), err)
		}
	}
	return providers, nil
}

// UpgradeOptions are what UpgradeProviders takes.
type UpgradeOptions struct {
	// Kubeconfig and Context reach the cluster, for clusterctl; Client reaches it for the waits.
	Kubeconfig, Context string
	Client              client.Client
	// WorkDir receives the clusterctl configuration.
	WorkDir string
	// Timeout bounds the wait for the providers.
	Timeout  time.Duration
	Progress *progress.Printer
}

// UpgradeProviders upgrades, with clusterctl upgrade apply, each provider installed on the cluster
// of which the repository holds a newer version, then waits for them, as TKG's management
// cluster upgrade does with the versions of its BOM; it says so when every one is up to date.
func UpgradeProviders(ctx context.Context, o UpgradeOptions) error {
	current, err := InstalledProviders(ctx, o.Client)
	if err != nil {
		return err
	}
	upgrades, err := providerUpgrades(current, Providers())
	if err != nil {
		return err
	}
	if len(upgrades) == 0 {
		o.Progress.Infof("All providers are up to date...")
		return nil
	}
	apply := clusterctlclient.ApplyUpgradeOptions{Kubeconfig: clusterctlclient.Kubeconfig{Path: o.Kubeconfig, Context: o.Context}}
	var variables map[string]string
	var waits []installed
	for _, u := range upgrades {
		o.Progress.Infof("Upgrading provider %s from %s to %s", u.Name, u.Version, u.to)
		ref := u.Namespace + "/" + u.ProviderName + ":" + u.to
		switch clusterctlv1.ProviderType(u.Type) {
		case clusterctlv1.CoreProviderType:
			apply.CoreProvider = ref
		case clusterctlv1.BootstrapProviderType:
			apply.BootstrapProviders = append(apply.BootstrapProviders, ref)
		case clusterctlv1.ControlPlaneProviderType:
			apply.ControlPlaneProviders = append(apply.ControlPlaneProviders, ref)
		case clusterctlv1.InfrastructureProviderType:
			apply.InfrastructureProviders = append(apply.InfrastructureProviders, ref)
		case clusterctlv1.IPAMProviderType:
			apply.IPAMProviders = append(apply.IPAMProviders, ref)
		}
		if u.Name == VSphereInfrastructure {
			// CAPV's components take the vCenter credentials its manager runs with: TKG reads
			// them from the cluster too.
			if variables, err = vsphereCredentials(ctx, o.Client, u.Namespace); err != nil {
				return err
			}
		}
		waits = append(waits, installed{name: u.Name, namespace: u.Namespace})
	}
	c, err := newClient(ctx, o.WorkDir, o.Progress, variables, nil)
	if err != nil {
		return err
	}
	if err := c.ApplyUpgrade(ctx, apply); err != nil {
		return fmt.Errorf("failed to apply providers upgrade: %w", err)
	}
	wait, err := waitForProviders(ctx, o.Client, waits, o.Timeout, o.Progress)
	if err != nil {
		return err
	}
	return wait()
}

// upgrade is an installed provider and the newer version of it to install.
type upgrade struct {
	clusterctlv1.Provider
	to string
}

// providerUpgrades returns the installed providers of which the repository holds a newer
// version. A provider the repository does not hold is left as it is.
func providerUpgrades(installed []clusterctlv1.Provider, repository []Provider) ([]upgrade, error) {
	var out []upgrade
	for _, p := range installed {
		for _, r := range repository {
			if r.Name != p.Name {
				continue
			}
			have, err := semver.ParseTolerant(p.Version)
			if err != nil {
				return nil, fmt.Errorf("provider %s: installed version %q is not a semantic version (clusterctl records the version it installed; reinstall the provider with clusterctl): %w", klog.KObj(&p), p.Version, err)
			}
			want, err := semver.ParseTolerant(r.Version)
			if err != nil {
				return nil, fmt.Errorf("provider %s of the repository: version %q: %w", r.Name, r.Version, err)
			}
			if want.GT(have) {
				out = append(out, upgrade{Provider: p, to: r.Version})
			}
		}
	}
	return out, nil
}

// vsphereCredentials reads the vCenter credentials of CAPV's manager from its
// capv-manager-bootstrap-credentials Secret, as the values of its components' variables.
func vsphereCredentials(ctx context.Context, c client.Client, namespace string) (map[string]string, error) {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: namespace, Name: "capv-manager-bootstrap-credentials"}
	if err := c.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("failed to get Secret %s, CAPV's vCenter credentials, to upgrade it: %w", key, err)
	}
	username, password, err := vcenter.ParseCAPVCredentials(secret.Data["credentials.yaml"])
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w (restore it: CAPV's manager reads it too)", key, err)
	}
	if username == "" {
		return nil, fmt.Errorf("secret %s: credentials.yaml has no username: restore it (CAPV's manager reads it too)", key)
	}
	return map[string]string{config.VSphereUsername: username, config.VSpherePassword: password}, nil
}
