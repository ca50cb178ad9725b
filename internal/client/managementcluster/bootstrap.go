package managementcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/hostnet"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/registrytrust"
)

// BootstrapOptions are what Bootstrap takes.
type BootstrapOptions struct {
	// Cluster is the local cluster to create; its Progress prints the payload's lines too.
	Cluster localcluster.CreateOptions
	// PackageRepository is the management package repository's imgpkg bundle, read first;
	// Repository is one already read, which is used instead.
	PackageRepository string
	Repository        *Repository
	// Trust is how the repository's registry is trusted, when it is read here.
	Trust registrytrust.Trust
	// InfrastructureProvider selects the Cluster API infrastructure provider and the ClusterClass
	// package tkg-pkg installs; empty is "local".
	InfrastructureProvider string
	// ProviderVariables are the values of the providers' variables (CAPV's vCenter credentials).
	ProviderVariables map[string]string
	// Timeout bounds each wait of the payload; zero is DefaultTimeout.
	Timeout time.Duration
	// Progress prints the payload's lines; nil is the cluster's printer.
	Progress *progress.Printer
}

// DefaultTimeout bounds each wait of the payload when the caller gives none.
const DefaultTimeout = 5 * time.Minute

// BootstrapEgress returns the destinations off the local runtime's bridge that the nodes of a
// bootstrap (or cleanup) cluster reach through this host (localcluster.Spec.Egress), as a kind
// node reaches them through Docker's NAT: on vSphere, the vCenter (server, as VSPHERE_SERVER: a
// host, HOST:PORT or an https URL, port 443 unless it names one) for CAPV, and the management
// cluster's control-plane endpoint (endpoint, HOST or HOST:PORT, port apiServerPort, 6443 when
// 0), which Cluster API's controllers and kapp-controller reach. A destination on the bridge (the
// simulator serving there, the endpoints of its VMs) is reached directly and left out; the local
// provider has none.
func BootstrapEgress(infrastructure, server, endpoint string, apiServerPort int) []string {
	if infrastructure != "vsphere" {
		return nil
	}
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		server = u.Host
	}
	if apiServerPort == 0 {
		apiServerPort = 6443
	}
	var out []string
	for _, d := range [][2]string{{server, "443"}, {endpoint, strconv.Itoa(apiServerPort)}} {
		if d[0] == "" {
			continue
		}
		address := d[0]
		if _, _, err := net.SplitHostPort(address); err != nil {
			address = net.JoinHostPort(address, d[1])
		}
		if !hostnet.Reaches(address) {
			out = append(out, address)
		}
	}
	return out
}

// CheckReach refuses a cluster given with -e (flag names it with the kubeconfig at path, in its
// current context) that is a local cluster of this host whose nodes cannot reach every
// destination in need (BootstrapEgress): its providers would wait for them until the timeout,
// since a local cluster's nodes reach off the bridge only the egress it was made with. A cluster
// of elsewhere is taken as given.
func CheckReach(store localcluster.Store, flag, path, context string, need []string) error {
	name, ok := strings.CutPrefix(context, localcluster.ContextName(""))
	if len(need) == 0 || !ok {
		return nil
	}
	spec, err := store.Get(name)
	if errors.Is(err, localcluster.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	unreached, err := spec.Unreached(need)
	if err != nil || len(unreached) == 0 {
		return err
	}
	had := "none"
	if len(spec.Egress) > 0 {
		had = strings.Join(spec.Egress, ", ")
	}
	return fmt.Errorf("%s %s: the nodes of local cluster %s cannot reach %s, which its Cluster API providers need (vCenter, the "+
		"management cluster's endpoint): a local cluster's nodes reach off the bridge only what it was made with (%s). "+
		"Make one with `slipway local cluster create NAME --bootstrap --infrastructure-provider vsphere` and the VSPHERE_* "+
		"variables set, or leave out -e and one is made", flag, path, name, strings.Join(unreached, " and "), had)
}

// Bootstrap creates a local cluster and installs TKG's bootstrap payload on it: what TKG does
// on its kind cluster before it creates a management cluster. The package repository is read
// before anything starts. A cluster whose payload fails is kept for inspection.
func Bootstrap(ctx context.Context, store localcluster.Store, o BootstrapOptions) error {
	repo := o.Repository
	if repo == nil {
		var err error
		if repo, err = ReadRepository(ctx, o.PackageRepository, o.Trust); err != nil {
			return err
		}
	}
	if o.InfrastructureProvider == "" {
		o.InfrastructureProvider = "local"
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Progress == nil {
		o.Progress = o.Cluster.Progress
	}
	if err := store.Create(ctx, o.Cluster); err != nil {
		return err
	}
	dirs, err := store.Dirs(o.Cluster.Name)
	if err != nil {
		return err
	}
	_, err = Run(ctx, Options{
		Kubeconfig: dirs.Kubeconfig(), WorkDir: dirs.Root, Repository: repo,
		InfrastructureProvider: o.InfrastructureProvider, ProviderVariables: o.ProviderVariables, Timeout: o.Timeout, Progress: o.Progress,
	})
	if err != nil {
		name := o.Cluster.Name
		return fmt.Errorf("%w\nthe cluster %q is kept for inspection; `slipway local cluster delete %s` removes it", err, name, name)
	}
	return nil
}
