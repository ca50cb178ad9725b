package managementcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/assets"
	slipwayclient "github.com/slipway-dev/slipway/internal/client"
	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/client/clusterctl"
	"github.com/slipway-dev/slipway/internal/client/tkr"
	"github.com/slipway-dev/slipway/internal/config"
	"github.com/slipway-dev/slipway/internal/kubeconfig"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// CreateOptions are what Create takes.
type CreateOptions struct {
	// File is the flat configuration file; empty is the embedded default (a local
	// management cluster).
	File string
	// Environ overrides the file's variables, as TKG reads the environment.
	Environ []string
	// Set are variables set by flags (--name, --plan, --cni), overriding both.
	Set map[string]string
	// PackageRepository is the management package repository's imgpkg bundle; empty, it is the
	// default, or its copy in TKG_CUSTOM_IMAGE_REPOSITORY.
	PackageRepository string
	// Home is slipway's state directory: clusterconfigs/, logs/, the bootstrap kubeconfigs.
	Home string
	// Store holds the bootstrap cluster (and, on the local provider, the management cluster).
	Store localcluster.Store
	// Kubeconfig is where the management cluster's context is merged; empty is kubectl's.
	Kubeconfig string
	// UseExistingBootstrap is the kubeconfig of a bootstrap cluster to use instead of making
	// one (-e), as its current context: what a failed run left.
	UseExistingBootstrap string
	// Timeout bounds each wait.
	Timeout time.Duration
	// DryRun prints the management Cluster and its ClusterBootstrap and starts nothing.
	DryRun bool
	// Progress prints TKG's lines.
	Progress *progress.Printer
	// Out receives what --dry-run prints: the manifests.
	Out io.Writer
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// AcceptThumbprint is asked, where TKG prompts, whether to go on with the vCenter's
	// certificate thumbprint when VSPHERE_TLS_THUMBPRINT is unset or differs (-y, or the
	// user's answer); nil refuses with the thumbprint in the message.
	AcceptThumbprint func(host, thumbprint, configured string) bool
}

// Result is what a successful create made.
type Result struct {
	Name, Namespace string
	// Context is the management cluster's context in Kubeconfig.
	Context, Kubeconfig string
	// ConfigFile is the saved configuration.
	ConfigFile string
}

// flow is one run of Create: its options, configuration and what the steps made so far.
type flow struct {
	o    CreateOptions
	p    *progress.Printer
	vars *config.Variables
	cfg  *config.Cluster
	// repo is the management package repository, read before anything starts.
	repo *Repository
	// bootName, bootKubeconfig reach the bootstrap cluster; boot is its client.
	bootName, bootKubeconfig string
	boot                     client.Client
	// tkrName is the release of the management cluster.
	tkrName string
	// mgmtKubeconfig reaches the management cluster (its admin context); mgmt is its client.
	mgmtKubeconfig string
	mgmt           client.Client
	tkgVersion     string
	configFile     string
	// hostRegistries are the registries on this host's loopback the bootstrap cluster's nodes
	// pull from too: TKG_CUSTOM_IMAGE_REPOSITORY's.
	hostRegistries []string
	// resumed says the Cluster was on the bootstrap cluster before this run (-e): its control
	// plane is waited for by its conditions only.
	resumed bool
}

// Error is a failed create: which step, why, and the ways out.
type Error struct {
	Step string
	Err  error
	// Bootstrap is the kubeconfig of the kept bootstrap cluster, when there is one.
	Bootstrap, BootstrapName string
	LogFile                  string
	Name                     string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "unable to set up management cluster: step %q failed: %v", e.Step, e.Err)
	if e.Bootstrap != "" {
		fmt.Fprintf(&b, "\n\nFailure while deploying management cluster, here are some steps to investigate the cause:\n\nDebug:\n"+
			"    kubectl get po,deploy,cluster,kubeadmcontrolplane,machine,machinedeployment -A --kubeconfig %s\n", e.Bootstrap)
		fmt.Fprintf(&b, "\nTo resume with the kept bootstrap cluster:\n    slipway management-cluster create -e --kubeconfig %s ...(the same flags)\n", e.Bootstrap)
		fmt.Fprintf(&b, "\nTo clean up the bootstrap cluster and what it made:\n    slipway local cluster delete %s\n", e.BootstrapName)
	}
	if e.LogFile != "" {
		fmt.Fprintf(&b, "\nThe full log is %s", e.LogFile)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Create makes a management cluster as TKG's InitRegion does (seeds/000).
func Create(ctx context.Context, o CreateOptions) (*Result, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Minute
	}
	f := &flow{o: o, p: o.Progress}
	f.p.Infof("")
	f.p.Infof("Validating the pre-requisites...")
	if err := f.validate(ctx); err != nil {
		return nil, fmt.Errorf("configuration validation failed: %w", err)
	}
	if o.DryRun {
		return nil, f.dryRun()
	}
	f.p.Infof("")
	f.p.Infof("Setting up management cluster...")
	err := f.p.Run(ctx,
		progress.NamedStep{Name: "bootstrap cluster", Run: f.bootstrap},
		progress.NamedStep{Name: "management cluster config", Run: f.saveConfig},
		progress.NamedStep{Name: "check release", Run: f.checkRelease},
		progress.NamedStep{Name: "create management cluster", Run: f.createCluster},
		progress.NamedStep{Name: "control plane", Run: f.waitControlPlane},
		progress.NamedStep{Name: "kubeconfig", Run: f.saveKubeconfig},
		progress.NamedStep{Name: "payload on management cluster", Run: f.installPayload},
		progress.NamedStep{Name: "ready for move", Run: f.waitReadyForMove},
		progress.NamedStep{Name: "cluster bootstrap", Run: f.applyClusterBootstrap},
		progress.NamedStep{Name: "move", Run: f.move},
		progress.NamedStep{Name: "self-managed", Run: f.waitSelfManaged},
		progress.NamedStep{Name: "patch", Run: f.patch},
		progress.NamedStep{Name: "delete bootstrap cluster", Run: f.deleteBootstrap},
	)
	if err != nil {
		// Run fails with a *progress.StepError only.
		se := &progress.StepError{Err: err}
		errors.As(err, &se)
		e := &Error{Step: se.Step, Err: se.Err, LogFile: f.p.LogPath(), Name: f.cfg.Name}
		if f.bootstrapKept() {
			e.Bootstrap, e.BootstrapName = f.bootKubeconfig, f.bootName
		}
		return nil, e
	}
	f.p.Infof("")
	f.p.Infof("Management cluster created!")
	f.p.Infof("")
	f.p.Infof("")
	f.p.Infof("You can now create your first workload cluster by running the following:")
	f.p.Infof("")
	f.p.Infof("  slipway cluster create [name] -f [file]")
	f.p.Infof("")
	f.p.Infof("")
	f.p.Infof("Some addons might be getting installed! Check their status by running the following:")
	f.p.Infof("")
	f.p.Infof("  kubectl --context %s get apps -A", ContextName(f.cfg.Name))
	f.p.Infof("")
	f.printSteps()
	return &Result{Name: f.cfg.Name, Namespace: f.cfg.Namespace, Context: ContextName(f.cfg.Name), Kubeconfig: f.kubeconfigPath(), ConfigFile: f.configFile}, nil
}

// bootstrapKept says whether a failed create leaves a bootstrap cluster of its own making: the
// ways out name it only then. A bootstrap cluster whose node did not boot is deleted by its
// create, and a cluster given with --use-existing-bootstrap-cluster is the user's.
func (f *flow) bootstrapKept() bool {
	if f.bootKubeconfig == "" || f.o.UseExistingBootstrap != "" {
		return false
	}
	_, err := f.o.Store.Get(f.bootName)
	return err == nil
}

// printSteps ends the run with how long each step took: where the minutes go.
func (f *flow) printSteps() {
	var total time.Duration
	f.p.Infof("Steps:")
	for _, s := range f.p.Steps() {
		f.p.Infof("  %-32s %8s", s.Name, s.Duration.Round(100*time.Millisecond))
		total += s.Duration
	}
	f.p.Infof("  %-32s %8s", "total", total.Round(100*time.Millisecond))
}

// ContextName is the management cluster's admin context in the kubeconfig, as TKG names it.
func ContextName(name string) string { return name + "-admin@" + name }

func (f *flow) kubeconfigPath() string {
	if f.o.Kubeconfig != "" {
		return f.o.Kubeconfig
	}
	return kubeconfig.DefaultPath()
}

// dryRun prints the management Cluster and its ClusterBootstrap.
func (f *flow) dryRun() error {
	data, err := cluster.Manifests(f.cfg.Objects(f.tkrName)...)
	if err != nil {
		return err
	}
	_, err = f.o.Out.Write(data)
	return err
}

// bootstrap makes the bootstrap cluster with TKG's payload, or reaches the one -e names.
func (f *flow) bootstrap(ctx context.Context) error {
	if f.o.UseExistingBootstrap != "" {
		// As TKG's -e: the payload is installed on the given cluster too; each part of it skips
		// what is there already, so a run that failed half-way through it resumes.
		f.bootKubeconfig = f.o.UseExistingBootstrap
		f.p.Infof("Using the bootstrap cluster of %s", f.bootKubeconfig)
		var err error
		if f.boot, err = slipwayclient.New(f.bootKubeconfig, ""); err != nil {
			return err
		}
		_, err = Run(ctx, Options{
			Kubeconfig: f.bootKubeconfig, WorkDir: filepath.Join(f.o.Home, "tmp", "existing-bootstrap"), Repository: f.repo,
			InfrastructureProvider: f.cfg.InfrastructureProvider, ProviderVariables: f.cfg.VSphere.ProviderVariables(), Timeout: f.o.Timeout, Progress: f.p,
		})
		return err
	}
	f.bootName = "tkg-kind-" + rand.String(12)
	f.bootKubeconfig = filepath.Join(f.o.Home, "tmp", "config_"+f.bootName)
	f.p.Infof("Setting up bootstrapper...")
	err := Bootstrap(ctx, f.o.Store, BootstrapOptions{
		Cluster: localcluster.CreateOptions{
			Name: f.bootName, KubernetesVersion: assets.DefaultKubernetesVersion(), ControlPlaneNodes: 1,
			Kubeconfig: f.bootKubeconfig, Wait: 2 * time.Minute, Progress: f.p.Detail(), Egress: f.bootstrapEgress(),
			HostRegistries: f.hostRegistries,
		},
		Repository:             f.repo,
		InfrastructureProvider: f.cfg.InfrastructureProvider,
		ProviderVariables:      f.cfg.VSphere.ProviderVariables(),
		Timeout:                f.o.Timeout,
		Progress:               f.p,
	})
	if err != nil {
		return err
	}
	f.p.Infof("Bootstrapper created. Kubeconfig: %s", f.bootKubeconfig)
	f.boot, err = slipwayclient.New(f.bootKubeconfig, localcluster.ContextName(f.bootName))
	return err
}

// bootstrapEgress is what the bootstrap cluster's nodes reach through this host (BootstrapEgress).
func (f *flow) bootstrapEgress() []string { return addresses(f.bootstrapDestinations()) }

// bootstrapDestinations are bootstrapEgress's destinations, each with what it is.
func (f *flow) bootstrapDestinations() []destination {
	if f.cfg.VSphere == nil {
		return nil
	}
	return bootstrapDestinations(f.cfg.InfrastructureProvider, f.cfg.VSphere.Server, f.cfg.VSphere.ControlPlaneEndpoint, f.cfg.APIServerPort)
}

// saveConfig saves the completed configuration, as TKG saves it under clusterconfigs/.
func (f *flow) saveConfig(context.Context) error {
	data, err := f.vars.Marshal()
	if err != nil {
		return err
	}
	f.configFile = filepath.Join(f.o.Home, "clusterconfigs", f.cfg.Name+".yaml")
	if err := os.MkdirAll(filepath.Dir(f.configFile), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(f.configFile, data, 0o600); err != nil {
		return err
	}
	f.p.Infof("Management cluster config file has been generated and stored at: '%s'", f.configFile)
	return nil
}

// checkRelease waits until a release of the configured Kubernetes version is Ready on the
// bootstrap cluster.
func (f *flow) checkRelease(ctx context.Context) error {
	announced := false
	return tkr.WaitReady(ctx, f.boot, []string{f.cfg.KubernetesVersion}, f.o.Timeout, tkr.Progress{
		Found: func(name string) {
			if !announced {
				announced = true
				f.p.Infof("Checking Tkr %s in bootstrap cluster...", name)
			}
		}})
}

// createCluster applies the management Cluster on the bootstrap cluster, after the vSphere
// credentials Secret its ClusterClass names (and tkr-vsphere-resolver reads).
func (f *flow) createCluster(ctx context.Context) error {
	f.p.Infof("Start creating management cluster...")
	if s := f.cfg.Secret(); s != nil {
		if err := f.boot.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("the vSphere credentials Secret %s: %w", klog.KObj(s), err)
		}
	}
	c := f.cfg.Object()
	maps.Copy(c.Annotations, tkg.OperationAnnotations(tkg.OperationCreate, f.o.Now(), f.o.Timeout))
	err := f.boot.Create(ctx, c)
	if apierrors.IsAlreadyExists(err) && f.o.UseExistingBootstrap != "" {
		f.p.Infof("Cluster %s/%s exists on the bootstrap cluster: resuming", c.Namespace, c.Name)
		f.resumed = true
		return nil
	}
	return err
}

// waitControlPlane waits for the Cluster's control plane to be available, or, for a Cluster this
// run made, for kubeadm's init to have initialized it behind its endpoint (kubeadmInitialized),
// saying why not.
func (f *flow) waitControlPlane(ctx context.Context) error {
	last, lastProbe := "", ""
	// The endpoint's client is made once, when the admin kubeconfig is there.
	var endpoint kubernetes.Interface
	err := f.waitCluster(ctx, f.boot, f.bootstrapName(), func(c *clusterv1.Cluster) (bool, string) {
		if conditions.IsTrue(c, clusterv1.ClusterControlPlaneAvailableCondition) {
			return true, ""
		}
		if !f.resumed {
			probe := f.kubeadmInitialized(ctx, &endpoint)
			if probe == "" {
				return true, ""
			}
			if probe != lastProbe {
				f.p.V(1).Infof("the control plane's endpoint: %s", probe)
				lastProbe = probe
			}
		}
		why := conditions.GetMessage(c, clusterv1.ClusterControlPlaneAvailableCondition)
		if why != last {
			f.p.V(1).Infof("control plane is not available yet, retrying: %s", why)
			last = why
		}
		return false, "control plane is not available yet: " + why
	})
	if err != nil {
		return err
	}
	f.p.Infof("Management cluster control plane is available, means API server is ready to receive requests")
	return nil
}

// kubeadmInitialized says why kubeadm has not initialized the management cluster's control plane
// yet, as its API server answers through the admin kubeconfig, or "" once it has: kubeadm's
// kubeadm-config ConfigMap written (what Cluster API's kubeadm control plane provider reads as
// initialized) and a Node labelled as a control plane (kubeadm's next phase). Cluster API sees it
// only through its cluster cache, which tried the cluster's endpoint as soon as its load balancer
// was up, before any node, and tries again 30 s after that failure: measured 2026-12-05, the
// control plane became available 13 s after kubeadm init had finished. *endpoint is the client
// of the cluster's endpoint, made at the first call that finds the admin kubeconfig.
func (f *flow) kubeadmInitialized(ctx context.Context, endpoint *kubernetes.Interface) string {
	if *endpoint == nil {
		admin, err := cluster.AdminKubeconfig(ctx, f.boot, client.ObjectKey{Namespace: f.cfg.Namespace, Name: f.cfg.Name})
		if err != nil {
			return err.Error()
		}
		rc, err := clientcmd.NewDefaultClientConfig(*admin, nil).ClientConfig()
		if err != nil {
			return err.Error()
		}
		rc.Timeout = 2 * time.Second
		if *endpoint, err = kubernetes.NewForConfig(rc); err != nil {
			return err.Error()
		}
	}
	cs := *endpoint
	if _, err := cs.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, "kubeadm-config", metav1.GetOptions{}); err != nil {
		return err.Error()
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: controlPlaneNodeLabel})
	if err != nil {
		return err.Error()
	}
	if len(nodes.Items) == 0 {
		return "no Node is labelled " + controlPlaneNodeLabel + " yet"
	}
	return ""
}

// controlPlaneNodeLabel is the label kubeadm gives a control-plane node.
const controlPlaneNodeLabel = "node-role.kubernetes.io/control-plane"

// bootstrapName names the bootstrap cluster in messages: the one this run made, or the one -e
// gave.
func (f *flow) bootstrapName() string {
	if f.bootName != "" {
		return "bootstrap cluster " + f.bootName
	}
	return "bootstrap cluster of " + f.bootKubeconfig
}

// unanswered is how long a cluster may not answer before a wait gives up on it: a bootstrap
// cluster whose processes were killed does not come back, and waiting out -t would only hide it.
const unanswered = 30 * time.Second

// waitCluster polls the management Cluster on a cluster (which names it) until done says so,
// the cluster stops answering, the timeout, or an interrupt.
func (f *flow) waitCluster(ctx context.Context, c client.Client, which string, done func(*clusterv1.Cluster) (bool, string)) error {
	return cluster.Wait{Client: c, Key: client.ObjectKey{Namespace: f.cfg.Namespace, Name: f.cfg.Name}, Timeout: f.o.Timeout, Progress: f.p,
		Interval: 2 * time.Second, Unanswered: unanswered, Which: which}.Until(ctx, done)
}

// saveKubeconfig reads the management cluster's admin kubeconfig, which Cluster API wrote, and
// merges it into the user's kubeconfig without switching to it, as TKG does.
func (f *flow) saveKubeconfig(ctx context.Context) error {
	add, err := cluster.AdminKubeconfig(ctx, f.boot, client.ObjectKey{Namespace: f.cfg.Namespace, Name: f.cfg.Name})
	if err != nil {
		return err
	}
	f.mgmtKubeconfig = SavedKubeconfig(f.o.Home, f.cfg.Name)
	if err := os.MkdirAll(filepath.Dir(f.mgmtKubeconfig), 0o700); err != nil {
		return err
	}
	if err := clientcmd.WriteToFile(*add, f.mgmtKubeconfig); err != nil {
		return err
	}
	path := f.kubeconfigPath()
	f.p.Infof("Saving management cluster kubeconfig into %s", path)
	if err := kubeconfig.Merge(path, add, ""); err != nil {
		return err
	}
	f.mgmt, err = slipwayclient.New(f.mgmtKubeconfig, ContextName(f.cfg.Name))
	return err
}

// installPayload installs kapp-controller, the providers and tkg-pkg on the management cluster.
func (f *flow) installPayload(ctx context.Context) error {
	var err error
	f.tkgVersion, err = Run(ctx, Options{
		Kubeconfig: f.mgmtKubeconfig, Context: ContextName(f.cfg.Name), WorkDir: filepath.Join(f.o.Home, "management", f.cfg.Name),
		Repository: f.repo, InfrastructureProvider: f.cfg.InfrastructureProvider, ProviderVariables: f.cfg.VSphere.ProviderVariables(), Timeout: f.o.Timeout, Progress: f.p, Management: true,
	})
	return err
}

// waitReadyForMove waits until the Cluster is Available with every machine a node, which
// clusterctl move requires.
func (f *flow) waitReadyForMove(ctx context.Context) error {
	f.p.Infof("Waiting for the management cluster to get ready for move...")
	return f.waitCluster(ctx, f.boot, f.bootstrapName(), func(c *clusterv1.Cluster) (bool, string) {
		if !conditions.IsTrue(c, clusterv1.AvailableCondition) {
			return false, "the management Cluster is not Available: " + conditions.GetMessage(c, clusterv1.AvailableCondition)
		}
		return true, ""
	})
}

// applyClusterBootstrap writes the management cluster's ClusterBootstrap on it, before its
// Cluster arrives, as TKG's CLI does: the addons manager there adopts it.
func (f *flow) applyClusterBootstrap(ctx context.Context) error {
	f.p.Infof("Applying ClusterBootstrap and its associated resources on management cluster")
	values, cb := f.cfg.PinnipedValues(), f.cfg.ClusterBootstrap(f.tkrName)
	logged := []client.Object{values, cb}
	if f.cfg.Identity != nil {
		// The identity provider's client secret or bind password stays out of the log.
		f.p.V(1).Infof("Applying Secret %s: pinniped's values for %s identity management (not logged: they hold its secret)", klog.KObj(values), f.cfg.Identity.Type)
		logged = logged[1:]
	}
	data, err := cluster.Manifests(logged...)
	if err != nil {
		return err
	}
	f.p.V(1).Infof("Applying ClusterBootstrap: %s", data)
	for _, o := range []client.Object{values, cb} {
		if err := f.mgmt.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// move moves every Cluster API object of the management cluster's namespace into it.
func (f *flow) move(ctx context.Context) error {
	f.p.Infof("Moving all Cluster API objects from bootstrap cluster to management cluster...")
	bootContext := ""
	if f.bootName != "" {
		bootContext = localcluster.ContextName(f.bootName)
	}
	opts := clusterctl.MoveOptions{
		FromKubeconfig: f.bootKubeconfig, FromContext: bootContext,
		ToKubeconfig: f.mgmtKubeconfig, ToContext: ContextName(f.cfg.Name),
		Namespace: f.cfg.Namespace, WorkDir: filepath.Join(f.o.Home, "management", f.cfg.Name), Progress: f.p,
	}
	// The objects the move takes, as they were on the bootstrap cluster, are what the management
	// cluster must hold after it: the move is checked, not trusted.
	opts.RecordDir, opts.From = filepath.Join(opts.WorkDir, "move"), f.boot
	dir := opts.RecordDir
	before, err := clusterctl.Move(ctx, opts)
	if err != nil {
		return err
	}
	f.p.Detail().Infof("Saved the %d objects moved in %s", len(before), dir)
	if diffs := before.Compare(ctx, f.mgmt); len(diffs) > 0 {
		return fmt.Errorf("the move did not keep %d of the %d objects as they were (they are saved in %s):\n  %s",
			len(diffs), len(before), dir, strings.Join(diffs, "\n  "))
	}
	f.p.Infof("Verified the move: the management cluster holds the %d objects as they were on the bootstrap cluster", len(before))
	return nil
}

// waitSelfManaged waits until the management cluster's own providers have taken its Cluster
// over: move restores no status, so infrastructure provisioned and the control plane available
// on the management cluster are its own controllers' doing.
func (f *flow) waitSelfManaged(ctx context.Context) error {
	f.p.Infof("Waiting for the management cluster to manage itself...")
	return f.waitCluster(ctx, f.mgmt, "management cluster "+f.cfg.Name, func(c *clusterv1.Cluster) (bool, string) {
		if !ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false) {
			return false, "the management cluster's infrastructure provider has not taken its Cluster over"
		}
		if !conditions.IsTrue(c, clusterv1.ClusterControlPlaneAvailableCondition) {
			return false, "control plane is not available on the management cluster: " + conditions.GetMessage(c, clusterv1.ClusterControlPlaneAvailableCondition)
		}
		// Its workers too: the Cluster was Available before the move, and "created" means it
		// is again where it now lives.
		if !conditions.IsTrue(c, clusterv1.AvailableCondition) {
			return false, "the management cluster is not available on itself yet: " + conditions.GetMessage(c, clusterv1.AvailableCondition)
		}
		return true, ""
	})
}

// patch marks the Cluster with its TKG version and edition, as TKG's PatchClusterInitOperations.
func (f *flow) patch(ctx context.Context) error {
	c := &clusterv1.Cluster{}
	if err := f.mgmt.Get(ctx, client.ObjectKey{Namespace: f.cfg.Namespace, Name: f.cfg.Name}, c); err != nil {
		return err
	}
	f.p.Infof("Applying patch to resource %s of type *v1beta2.Cluster ...", c.Name)
	before := c.DeepCopy()
	c.Annotations[tkg.AnnotationTKGVersion] = f.tkgVersion
	c.Annotations[tkg.AnnotationEdition] = "tkg"
	tkg.EndOperation(c.Annotations, tkg.OperationCreate)
	c.Annotations[tkg.AnnotationOperationLastObservedTimestamp] = tkg.Timestamp(f.o.Now())
	if err := f.mgmt.Patch(ctx, c, client.MergeFrom(before)); err != nil {
		return err
	}
	publishMetadata(ctx, f.p, f.mgmt, f.repo, f.cfg.Name, f.cfg.Plan, f.cfg.InfrastructureProvider, "created")
	f.p.Infof("You can now access the management cluster %s by running 'kubectl config use-context %s'", f.cfg.Name, ContextName(f.cfg.Name))
	return nil
}

// deleteBootstrap deletes the bootstrap cluster this run made; the clusters its provider made
// moved with their Cluster objects and stay.
func (f *flow) deleteBootstrap(context.Context) error {
	if f.bootName == "" {
		return nil
	}
	f.p.Infof("Deleting kind cluster: %s", f.bootName)
	if err := f.o.Store.Delete(f.bootName, ""); err != nil {
		return err
	}
	return os.Remove(f.bootKubeconfig)
}
