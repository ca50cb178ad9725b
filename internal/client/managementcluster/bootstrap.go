package managementcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slipway-dev/slipway/internal/config"
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
	return addresses(bootstrapDestinations(infrastructure, server, endpoint, apiServerPort))
}

// addresses are the destinations' HOST:PORTs.
func addresses(ds []destination) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.address)
	}
	return out
}

// destination is a place a bootstrap or cleanup cluster's nodes reach through this host: its
// HOST:PORT, what it is and the configuration variable that names it.
type destination struct{ address, what, variable string }

// bootstrapDestinations are BootstrapEgress's destinations, each with what it is.
func bootstrapDestinations(infrastructure, server, endpoint string, apiServerPort int) []destination {
	if infrastructure != "vsphere" {
		return nil
	}
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		server = u.Host
	}
	if apiServerPort == 0 {
		apiServerPort = 6443
	}
	var out []destination
	for _, d := range []struct{ host, port, what, variable string }{
		{server, "443", "vCenter", config.VSphereServer},
		{endpoint, strconv.Itoa(apiServerPort), "the management cluster's endpoint", config.VSphereControlPlaneEndpoint},
	} {
		if d.host == "" {
			continue
		}
		address := d.host
		if _, _, err := net.SplitHostPort(address); err != nil {
			address = net.JoinHostPort(address, d.port)
		}
		if !hostnet.Reaches(address) {
			out = append(out, destination{address: address, what: d.what, variable: d.variable})
		}
	}
	return out
}

// checkReach refuses a cluster given with -e (flag names it with the kubeconfig at path, in its
// current context) that is a local cluster of this host whose nodes cannot reach every
// destination in need: its providers would wait for them until the timeout, since a local
// cluster's nodes reach off the bridge only the egress it was made with. A cluster of elsewhere
// is taken as given.
func checkReach(store localcluster.Store, flag, path, current string, need []destination) error {
	name, ok := strings.CutPrefix(current, localcluster.ContextName(""))
	if len(need) == 0 || !ok || localcluster.ValidateName(name) != nil {
		return nil
	}
	spec, err := store.Get(name)
	if errors.Is(err, localcluster.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	missing, err := spec.Unreached(addresses(need))
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	var unreached, variables []string
	for _, d := range need {
		if slices.Contains(missing, d.address) {
			unreached = append(unreached, fmt.Sprintf("%s %s (%s)", d.what, d.address, d.variable))
			variables = append(variables, d.variable)
		}
	}
	if len(unreached) == 0 {
		return nil
	}
	had := "none"
	if len(spec.Egress) > 0 {
		had = strings.Join(spec.Egress, ", ")
	}
	return fmt.Errorf("%s %s: the nodes of local cluster %s cannot reach %s, which its Cluster API providers need: a local "+
		"cluster's nodes reach off the bridge only the destinations it was made with (%s). Make one that reaches them with "+
		"`slipway local cluster create NAME --bootstrap --infrastructure-provider vsphere` and %s set to them (with VSPHERE_USERNAME "+
		"and VSPHERE_PASSWORD), or leave out -e and one is made", flag, path, name, strings.Join(unreached, " and "), had, strings.Join(variables, " and "))
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
