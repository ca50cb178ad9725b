package managementcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	"github.com/slipway-dev/slipway/internal/assets"
	slipwayclient "github.com/slipway-dev/slipway/internal/client"
	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/client/clusterctl"
	"github.com/slipway-dev/slipway/internal/config"
	"github.com/slipway-dev/slipway/internal/controllers/addons/configs"
	"github.com/slipway-dev/slipway/internal/kubeconfig"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/vm"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// DeleteOptions are what Delete takes.
type DeleteOptions struct {
	// Name is the management cluster; its context NAME-admin@NAME in Kubeconfig reaches it.
	Name string
	// Kubeconfig holds the management cluster's context; empty is kubectl's.
	Kubeconfig string
	// Force deletes the management cluster even when it manages workload clusters, which are
	// deleted with it.
	Force bool
	// UseExistingCleanup is the kubeconfig of a cluster to use as the cleanup cluster (its
	// current context), as TKG's -e: the providers are installed on it when missing, and it is
	// kept.
	UseExistingCleanup string
	// Home is slipway's state directory; Store makes the cleanup cluster.
	Home  string
	Store localcluster.Store
	// Timeout bounds each wait.
	Timeout time.Duration
	// Progress prints TKG's lines.
	Progress *progress.Printer
}

// Delete deletes a management cluster as TKG does: its Cluster API objects move back to a
// cleanup cluster, which deletes the Cluster, so that Cluster API tears its machines down; then
// the cleanup cluster and the management cluster's context go.
func Delete(ctx context.Context, o DeleteOptions) error {
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Minute
	}
	p := o.Progress
	if o.Home != "" {
		if err := p.Audit(cluster.AuditLog(o.Home, o.Name)); err != nil {
			return err
		}
	}
	kubeconfigPath := o.Kubeconfig
	if kubeconfigPath == "" {
		kubeconfigPath = kubeconfig.DefaultPath()
	}
	p.Infof("Verifying management cluster...")
	if err := knownContext(o.Home, kubeconfigPath, o.Name); err != nil {
		return err
	}
	mgmt, err := slipwayclient.New(kubeconfigPath, ContextName(o.Name))
	if err != nil {
		return fmt.Errorf("management cluster %s is not reachable through context %s: %w", o.Name, ContextName(o.Name), err)
	}
	key := client.ObjectKey{Namespace: tkg.SystemNamespace, Name: o.Name}
	mc := &clusterv1.Cluster{}
	if err := mgmt.Get(ctx, key, mc); err != nil {
		return fmt.Errorf("management cluster %s: its Cluster %s: %w", o.Name, key, err)
	}
	infra, server, variables, err := infrastructureOf(ctx, mgmt, mc)
	if err != nil {
		return err
	}
	clusters := &clusterv1.ClusterList{}
	if err := mgmt.List(ctx, clusters); err != nil {
		return err
	}
	var workloads []string
	for _, c := range clusters.Items {
		if _, ok := c.Labels[tkg.LabelManagementCluster]; !ok {
			workloads = append(workloads, "- "+c.Namespace+"/"+c.Name)
		}
	}
	if len(workloads) > 0 && !o.Force {
		return fmt.Errorf("deletion is aborted because management cluster is currently managing the following workload clusters:\n\n%s\n\n"+
			"You need to delete these clusters first before deleting the management cluster.\n\n"+
			"Alternatively, you can use the --force flag to force the deletion of the management cluster but doing so will orphan the above-mentioned clusters and leave them unmanaged",
			strings.Join(workloads, "\n"))
	}

	d := &deletion{o: o, p: p, mgmt: mgmt, kubeconfig: kubeconfigPath, infrastructure: infra, variables: variables,
		// The cleanup cluster's nodes reach what a bootstrap cluster's would.
		reach: bootstrapDestinations(infra, server, endpointOf(mc), 0)}
	if err := d.providerSource(ctx, mc); err != nil {
		return err
	}
	err = p.Run(ctx,
		progress.NamedStep{Name: "cleanup cluster", Run: d.cleanupCluster},
		progress.NamedStep{Name: "move to cleanup cluster", Run: d.moveBack},
		progress.NamedStep{Name: "delete management cluster", Run: d.deleteCluster},
		progress.NamedStep{Name: "delete cleanup cluster", Run: d.deleteCleanup},
	)
	if se := (*progress.StepError)(nil); errors.As(err, &se) && d.cleanupName != "" && se.Step != "delete cleanup cluster" {
		return fmt.Errorf("%w\n\nFailure while deleting management cluster. Here are some steps to investigate the cause:\n\nDebug:\n"+
			"    kubectl get po,deploy,cluster,kubeadmcontrolplane,machine,machinedeployment -A --kubeconfig %s\n\n"+
			"The cleanup cluster is kept; `slipway local cluster delete %s` removes it and what it manages", err, d.cleanupKubeconfig, d.cleanupName)
	} else if err != nil {
		return err
	}
	p.Infof("Deleting the management cluster context from the kubeconfig file '%s'", kubeconfigPath)
	if err := kubeconfig.RemoveContext(kubeconfigPath, ContextName(o.Name)); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(o.Home, "management", o.Name)); err != nil {
		return err
	}
	if err := os.Remove(SavedKubeconfig(o.Home, o.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	p.Infof("")
	p.Infof("Management cluster deleted!")
	return nil
}

// deletion is one run of Delete.
type deletion struct {
	o          DeleteOptions
	p          *progress.Printer
	mgmt       client.Client
	kubeconfig string
	// cleanupName (empty for the user's, -e) names the cleanup cluster this run made;
	// cleanupKubeconfig and cleanupContext reach the cleanup cluster, and workDir receives
	// clusterctl's files for it; cleanup is its client.
	cleanupName, cleanupKubeconfig string
	cleanupContext, workDir        string
	cleanup                        client.Client
	// infrastructure and variables are the management cluster's infrastructure provider and
	// its variables, installed on the cleanup cluster.
	infrastructure string
	variables      map[string]string
	// reach is what the cleanup cluster's nodes reach through this host.
	reach []destination
	// images are where the cleanup cluster's providers run from, and hostRegistries what its
	// nodes pull from besides the local registry (providerSource).
	images         map[string]string
	hostRegistries []string
	// ipamWait waits for the cleanup cluster's IPAM providers, and stopIPAM ends that wait: it
	// goes on beside the move when the management cluster has no IP pools (cleanupCluster).
	ipamWait func() error
	stopIPAM context.CancelFunc
}

// providerSource finds where the cleanup cluster's providers run from: the provider images the
// management cluster's package repository locks, as on the bootstrap cluster (a copy's, when
// TKG_CUSTOM_IMAGE_REPOSITORY made it), pulled from the registries its own nodes pull from
// (its LocalCluster's hostRegistries), which must still answer on the bridge. A repository that
// cannot be read is said, and the providers then run as the provider repository names them.
func (d *deletion) providerSource(ctx context.Context, mc *clusterv1.Cluster) error {
	if ref := mc.Spec.InfrastructureRef; ref.Kind == "LocalCluster" {
		lc := &infrav1.LocalCluster{}
		if err := d.mgmt.Get(ctx, client.ObjectKey{Namespace: mc.Namespace, Name: ref.Name}, lc); err != nil {
			return fmt.Errorf("management cluster %s: its LocalCluster %s: %w", mc.Name, ref.Name, err)
		}
		for _, r := range lc.Spec.HostRegistries {
			// The check's own way out (unset the variable) is not one here.
			if err := localcluster.CheckHostRegistries(config.CustomImageRepository, []string{r}); err != nil {
				return fmt.Errorf("management cluster %s pulls from the registry %s (its LocalCluster's spec.hostRegistries), which the cleanup cluster's providers run from: serve it again on %s: %w",
					mc.Name, r, vm.BridgeAddress(r), errors.Unwrap(err))
			}
		}
		d.hostRegistries = lc.Spec.HostRegistries
	}
	repo, err := readManagementRepository(ctx, d.mgmt, "")
	if err != nil {
		d.p.Infof("Warning: %v: the cleanup cluster's providers run from the provider repository's images", err)
		return nil
	}
	d.images = repo.locked
	return nil
}

// infrastructureOf says which infrastructure provider the management cluster runs on, by its
// Cluster's infrastructure kind, and, for CAPV, its vCenter (the VSphereCluster's server) and the
// credentials it was installed with, which the cleanup cluster's CAPV needs to delete the VMs.
func infrastructureOf(ctx context.Context, mgmt client.Client, mc *clusterv1.Cluster) (infra, server string, variables map[string]string, err error) {
	if mc.Spec.InfrastructureRef.Kind != "VSphereCluster" {
		return "local", "", nil, nil
	}
	vc, err := configs.VSphereClusterOf(ctx, mgmt, mc)
	if err != nil {
		return "", "", nil, fmt.Errorf("management cluster %s runs on vSphere: %w", mc.Name, err)
	}
	secret := &corev1.Secret{}
	if err := mgmt.Get(ctx, cluster.CAPVCredentials, secret); err != nil {
		return "", "", nil, fmt.Errorf("management cluster %s runs on vSphere, but CAPV's credentials (Secret %s) cannot be read: %w", mc.Name, cluster.CAPVCredentials, err)
	}
	username, password, err := vcenter.ParseCAPVCredentials(secret.Data["credentials.yaml"])
	if err != nil {
		return "", "", nil, fmt.Errorf("management cluster %s: Secret %s: %w", mc.Name, cluster.CAPVCredentials, err)
	}
	return "vsphere", vc.Server, (&config.VSphere{Username: username, Password: password}).ProviderVariables(), nil
}

// cleanupCluster makes a local cluster with the Cluster API providers.
// With -e, the cluster given is used instead, and the providers it lacks are installed on it.
func (d *deletion) cleanupCluster(ctx context.Context) error {
	if path := d.o.UseExistingCleanup; path != "" {
		d.p.Infof("Using the cleanup cluster of %s", path)
		cfg, err := clientcmd.LoadFromFile(path)
		if err != nil {
			return fmt.Errorf("-e (--use-existing-cleanup-cluster) %s: %w", path, err)
		}
		if cfg.CurrentContext == "" {
			return fmt.Errorf("-e (--use-existing-cleanup-cluster) %s has no current context: set the cleanup cluster's with `kubectl config use-context`", path)
		}
		if err := checkReach(d.o.Store, "-e (--use-existing-cleanup-cluster)", path, cfg.CurrentContext, d.reach); err != nil {
			return err
		}
		d.cleanupKubeconfig, d.cleanupContext = path, cfg.CurrentContext
		d.workDir = filepath.Join(d.o.Home, "tmp", "existing-cleanup")
	} else {
		d.p.Infof("Setting up cleanup cluster...")
		name := "tkg-kind-" + rand.String(12)
		d.cleanupKubeconfig = filepath.Join(d.o.Home, "tmp", "config_"+name)
		d.cleanupContext = localcluster.ContextName(name)
		// A creation that fails removes what it made: only a cluster made is kept on a later
		// step's failure, and named in its message.
		if err := d.o.Store.Create(ctx, localcluster.CreateOptions{
			Name: name, KubernetesVersion: assets.DefaultKubernetesVersion(), ControlPlaneNodes: 1,
			Kubeconfig: d.cleanupKubeconfig, Wait: 2 * time.Minute, Progress: d.p.Detail(), Egress: addresses(d.reach),
			HostRegistries: d.hostRegistries,
		}); err != nil {
			return err
		}
		d.cleanupName = name
		dirs, err := d.o.Store.Dirs(d.cleanupName)
		if err != nil {
			return err
		}
		d.workDir = dirs.Root
	}
	var err error
	if d.cleanup, err = slipwayclient.New(d.cleanupKubeconfig, d.cleanupContext); err != nil {
		return err
	}
	// clusterctl installs what the cluster lacks and skips the providers it has.
	ctx, d.stopIPAM = context.WithCancel(ctx)
	d.ipamWait, err = clusterctl.Init(ctx, clusterctl.InitOptions{
		Kubeconfig: d.cleanupKubeconfig, Context: d.cleanupContext, Client: d.cleanup,
		WorkDir: d.workDir, Timeout: d.o.Timeout, Progress: d.p, Target: "cleanup cluster",
		Infrastructure: d.infrastructure, Variables: d.variables, Images: d.images,
	})
	if err != nil {
		d.stopIPAM()
		return err
	}
	// The move brings the IP pools, which the IPAM provider's webhooks admit: with pools to
	// move (or when the management cluster cannot say), that provider is waited for first;
	// without, its wait goes on beside the move.
	pools, err := holdsIPPools(ctx, d.mgmt)
	if err != nil {
		d.p.V(1).Infof("Waiting for the IPAM provider before the move: %v", err)
	}
	if err != nil || pools {
		werr := d.ipamWait()
		d.stopIPAM()
		return werr
	}
	return nil
}

// ipamGroup and ipPoolKinds are the in-cluster IPAM provider's pools: the kinds its webhooks
// admit.
const ipamGroup = "ipam.cluster.x-k8s.io"

var ipPoolKinds = []string{"InClusterIPPool", "GlobalInClusterIPPool", "InClusterPrefixPool", "GlobalInClusterPrefixPool"}

// holdsIPPools says whether a cluster has IP pools of the in-cluster IPAM provider; a cluster
// without the provider's kinds has none.
func holdsIPPools(ctx context.Context, c client.Client) (bool, error) {
	for _, kind := range ipPoolKinds {
		m, err := c.RESTMapper().RESTMapping(schema.GroupKind{Group: ipamGroup, Kind: kind})
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("failed to find the management cluster's %s: %w", kind, err)
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(m.GroupVersionKind.GroupVersion().WithKind(kind + "List"))
		if err := c.List(ctx, list, client.Limit(1)); err != nil {
			return false, fmt.Errorf("failed to list the management cluster's %s: %w", kind, err)
		}
		if len(list.Items) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// moveBack moves the Cluster API objects from the management cluster to the cleanup cluster and
// waits until the cleanup cluster's providers have taken them over.
func (d *deletion) moveBack(ctx context.Context) (err error) {
	// The IPAM providers' wait, when it went on beside the move, is joined at the end of this
	// step; a failure of the step stops it. Without IP pools nothing of the deletion needs the
	// IPAM provider, so its own failure, once the objects have moved, is a warning: returning it
	// would leave the management cluster's objects on the cleanup cluster, half-deleted.
	defer func() {
		if err != nil {
			d.stopIPAM()
		}
		werr := d.ipamWait()
		d.stopIPAM()
		if err == nil && werr != nil {
			d.p.Infof("Warning: %v (the management cluster holds no IP pools: its deletion goes on)", werr)
		}
	}()
	d.p.Infof("Moving TKR and Cluster API objects from management cluster to cleanup cluster...")
	if _, err := clusterctl.Move(ctx, clusterctl.MoveOptions{
		FromKubeconfig: d.kubeconfig, FromContext: ContextName(d.o.Name),
		ToKubeconfig: d.cleanupKubeconfig, ToContext: d.cleanupContext,
		Namespace: tkg.SystemNamespace, WorkDir: d.workDir, Progress: d.p,
	}); err != nil {
		return err
	}
	d.p.Infof("Waiting for the Cluster API objects to get ready after move...")
	return cluster.Wait{Client: d.cleanup, Key: client.ObjectKey{Namespace: tkg.SystemNamespace, Name: d.o.Name}, Timeout: d.o.Timeout,
		Progress: d.p, Interval: 2 * time.Second}.Until(ctx, func(c *clusterv1.Cluster) (bool, string) {
		if ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false) {
			return true, ""
		}
		// The provider's own word on why (CAPV's on the vCenter it cannot reach), mirrored on the
		// Cluster, says more than the wait does.
		why := "the cleanup cluster's infrastructure provider has not taken the Cluster over"
		if msg := conditions.GetMessage(c, clusterv1.ClusterInfrastructureReadyCondition); msg != "" {
			why += ": " + msg
		}
		return false, why
	})
}

// deleteCluster deletes the management Cluster from the cleanup cluster and waits until Cluster
// API has deleted its machines and infrastructure.
func (d *deletion) deleteCluster(ctx context.Context) error {
	d.p.Infof("Deleting management cluster...")
	c := &clusterv1.Cluster{}
	key := client.ObjectKey{Namespace: tkg.SystemNamespace, Name: d.o.Name}
	if err := d.cleanup.Get(ctx, key, c); err != nil {
		return err
	}
	if err := d.cleanup.Delete(ctx, c); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := cluster.WaitGone(ctx, d.cleanup, key, d.o.Timeout, d.p); err != nil {
		return err
	}
	d.p.Infof("Management cluster '%s' deleted.", d.o.Name)
	// Deleted: its audit log goes, as TKG's.
	if path := d.p.AuditPath(); path != "" {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// deleteCleanup deletes the cleanup cluster this run made; the user's (-e) is kept.
func (d *deletion) deleteCleanup(context.Context) error {
	if d.cleanupName == "" {
		d.p.Infof("Keeping the cleanup cluster of %s, given with -e", d.cleanupKubeconfig)
		return nil
	}
	if err := d.o.Store.Delete(d.cleanupName, ""); err != nil {
		return err
	}
	return os.Remove(d.cleanupKubeconfig)
}

// endpointOf is a Cluster's control-plane endpoint, HOST:PORT, or "" before it has one.
func endpointOf(c *clusterv1.Cluster) string {
	e := c.Spec.ControlPlaneEndpoint
	if e.Host == "" {
		return ""
	}
	return net.JoinHostPort(e.Host, fmt.Sprint(e.Port))
}
