package cluster

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/assets"
	tkrclient "github.com/slipway-dev/slipway/internal/client/tkr"
	"github.com/slipway-dev/slipway/internal/config"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// CreateOptions are what Create takes.
type CreateOptions struct {
	// Name is the cluster's name; it overrides the file's CLUSTER_NAME.
	Name string
	// File is TKG's flat configuration file; empty is the defaults.
	File string
	// Environ overrides the file, as TKG reads the environment; Set are the flags' variables,
	// which override both.
	Environ []string
	Set     map[string]string
	// Client reaches the management cluster.
	Client client.Client
	// Home receives the converted configuration under clusterconfigs/.
	Home string
	// DryRun prints the Cluster (and its ClusterBootstrap) on Out and creates nothing.
	DryRun bool
	Out    io.Writer
	// Timeout bounds each wait.
	Timeout  time.Duration
	Progress *progress.Printer
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// CheckHost checks that this host can start the nodes of a cluster of the local provider
	// (localcluster.Store.CheckHostLimits); nil checks nothing.
	CheckHost HostCheck
	// TKR is the release to create the cluster of, by name or a prefix of its name or version
	// (`--tkr`, as TKG's); it sets KUBERNETES_VERSION to the release's version. Empty takes the
	// release of that variable.
	TKR string
}

// Create creates a workload cluster as `tanzu cluster create` does: a ClusterClass file as given,
// or, with auto-apply, a legacy flat file converted into a ClusterClass Cluster and saved; the
// Cluster applied with TKG's operation annotations, then TKG's waits.
func Create(ctx context.Context, o CreateOptions) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Minute
	}
	p := o.Progress
	p.Infof("Validating configuration...")
	if o.File != "" {
		objs, ok, err := readObjects(o.File)
		if err != nil {
			return err
		}
		if ok {
			return createFromObjects(ctx, o, objs)
		}
	}
	v, err := config.Read(o.File, o.Environ)
	if err != nil {
		return err
	}
	for name, value := range o.Set {
		v.Set(name, value)
	}
	if o.Name != "" {
		v.Set(config.ClusterName, o.Name)
	}
	var chosen *runv1alpha3.TanzuKubernetesRelease
	if o.TKR != "" {
		if chosen, err = tkrclient.Resolve(ctx, o.Client, o.TKR); err != nil {
			return fmt.Errorf("invalid --tkr: %w", err)
		}
		// The release's own version, which the TKR resolver resolves to this release and no
		// other of the same Kubernetes version, as TKG writes it.
		v.Set(config.KubernetesVersion, chosen.Spec.Version)
	}
	for _, n := range v.Unknown() {
		p.Infof("Warning: %s: it is ignored", config.NotKnown(n))
	}
	cfg, err := config.Complete(v, config.Workload, config.Defaults{KubernetesVersion: assets.DefaultKubernetesVersion(), Now: o.Now()}, p.V(1).Infof)
	if err != nil {
		return fmt.Errorf("configuration validation failed: %w", err)
	}
	key := client.ObjectKey{Namespace: cfg.Namespace, Name: cfg.Name}
	if err := o.Client.Get(ctx, key, &clusterv1.Cluster{}); err == nil {
		return fmt.Errorf("cluster with name %s already exists, please specify another name", cfg.Name)
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to reach the management cluster: %w", err)
	}
	if custom, _ := v.Get(config.CustomImageRepository); cfg.InfrastructureProvider == "local" && custom != "" {
		// The nodes pull from the copy on this host's loopback (the ClusterClass's
		// imageRepository variable): one elsewhere no node reaches.
		registry, err := localcluster.HostRegistry(config.CustomImageRepository, custom)
		if err != nil {
			return fmt.Errorf("configuration validation failed: %w", err)
		}
		if !o.DryRun {
			if err := localcluster.CheckHostRegistries(config.CustomImageRepository, []string{registry}); err != nil {
				return err
			}
		}
	}
	if cfg.InfrastructureProvider == "local" && !o.DryRun {
		if err := checkLocalHost(o.CheckHost, p, cfg.ControlPlaneMachineCount, cfg.WorkerMachineCount); err != nil {
			return err
		}
	}
	tkr := chosen
	if tkr == nil {
		if tkr, err = release(ctx, o.Client, cfg.KubernetesVersion); err != nil {
			return err
		}
	}
	if cfg.VSphere != nil {
		images, err := releaseImages(ctx, o.Client, tkr, cfg)
		if err != nil {
			return fmt.Errorf("configuration validation failed: %w", err)
		}
		used, err := usedEndpoints(ctx, o.Client)
		if err != nil {
			return err
		}
		if err := CheckVSphere(ctx, cfg, false, tkr.Spec.Version, images, used, nil, p.Infof); err != nil {
			return fmt.Errorf("configuration validation failed: %w", err)
		}
	}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: "kube-public", Name: "pinniped-info"}, &corev1.ConfigMap{}); apierrors.IsNotFound(err) {
		p.Infof("Warning: Pinniped configuration not found; Authentication via Pinniped will not be set up in this cluster. " +
			"If you wish to set up Pinniped after the cluster is created, please refer to the documentation.")
	}
	for _, n := range cfg.Notes {
		p.Infof("Warning: %s", n)
	}
	// The credentials Secret, then the Cluster, then, for a CNI other than the release's, the
	// ClusterBootstrap TKG's yttcb writes: its defaulting reads the Cluster's infrastructure to
	// keep the CPI and CSI of its provider only.
	objs := cfg.Objects(tkr.Name)
	var c *clusterv1.Cluster
	for _, o := range objs {
		if cl, ok := o.(*clusterv1.Cluster); ok {
			c = cl
		}
	}
	path := filepath.Join(o.Home, "clusterconfigs", cfg.Name+".yaml")
	data, err := Manifests(objs...)
	if err != nil {
		return err
	}
	if o.DryRun {
		_, err := o.Out.Write(data)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	if o.File != "" {
		p.Infof("")
		p.Infof("Legacy configuration file detected. The inputs from said file have been converted into the new Cluster configuration as '%s'", path)
	}
	p.Infof("")
	p.Infof("Using this new Cluster configuration '%s' to create the cluster.", path)
	p.Infof("")
	annotations := tkg.OperationAnnotations(tkg.OperationCreate, o.Now(), o.Timeout)
	maps.Copy(c.Annotations, annotations)
	return createAndWait(ctx, o, key, objs)
}

// createAndWait creates a cluster's objects, in order, and runs TKG's waits on it, keeping its
// audit log.
func createAndWait(ctx context.Context, o CreateOptions, key client.ObjectKey, objs []client.Object) error {
	p := o.Progress
	if o.Home != "" {
		if err := p.Audit(AuditLog(o.Home, key.Name)); err != nil {
			return err
		}
	}
	p.Infof("creating workload cluster '%s'...", key.Name)
	w := waiter{c: o.Client, key: key, timeout: o.Timeout, p: p}
	// made says the Cluster is made: from then on, its controllers go on whatever the flow does.
	made := false
	err := p.Run(ctx,
		progress.NamedStep{Name: "create objects", Run: func(ctx context.Context) error {
			for _, obj := range objs {
				if err := o.Client.Create(ctx, obj); err != nil {
					return fmt.Errorf("failed to create %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
				}
				made = made || isCluster(obj)
			}
			return nil
		}},
		progress.NamedStep{Name: "control plane", Run: w.initialized},
		progress.NamedStep{Name: "nodes", Run: w.nodes},
		progress.NamedStep{Name: "core packages", Run: w.corePackages},
		// Created: a later loss of every worker is not a creation that stalled.
		progress.NamedStep{Name: "record", Run: func(ctx context.Context) error { return clearOperation(ctx, o.Client, key, tkg.OperationCreate) }},
	)
	if err != nil && made {
		return &WaysOutError{Err: err, WaysOut: fmt.Sprintf("The Cluster is made, and the management cluster goes on creating it.\n"+
			"To see where it is:\n    slipway cluster get %[1]s -n %[2]s\nTo delete it:\n    slipway cluster delete %[1]s -n %[2]s", key.Name, key.Namespace)}
	}
	if err != nil {
		return err
	}
	p.Infof("")
	p.Infof("Workload cluster '%s' created", key.Name)
	p.Infof("")
	return nil
}

// isCluster says whether obj is a Cluster, typed or read from a file.
func isCluster(obj client.Object) bool {
	if _, typed := obj.(*clusterv1.Cluster); typed {
		return true
	}
	return obj.GetObjectKind().GroupVersionKind().GroupKind() == clusterv1.GroupVersion.WithKind("Cluster").GroupKind()
}

// release returns the Ready release of a Kubernetes version on the management cluster.
func release(ctx context.Context, c client.Client, version string) (*runv1alpha3.TanzuKubernetesRelease, error) {
	list := &runv1alpha3.TanzuKubernetesReleaseList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("failed to list the Kubernetes releases: %w", err)
	}
	var ready []string
	for i := range list.Items {
		tkr := &list.Items[i]
		if !tkr.Status.Conditions.IsTrue(runv1alpha3.ConditionReady) {
			continue
		}
		ready = append(ready, tkr.Spec.Version)
		if tkg.ReleaseOf(tkr.Spec.Version, version) {
			return tkr, nil
		}
	}
	slices.Sort(ready)
	return nil, fmt.Errorf("invalid %s %q: the management cluster has no Ready Kubernetes release of it: use one of %s (`slipway kubernetes-release get`)",
		config.KubernetesVersion, version, strings.Join(ready, ", "))
}

// Manifests is the objects' YAML as a user applies it: each after "---", without status or an
// empty creationTimestamp.
func Manifests(objs ...client.Object) ([]byte, error) {
	var out []byte
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		delete(m, "status")
		if meta, ok := m["metadata"].(map[string]any); ok {
			delete(meta, "creationTimestamp")
		}
		if data, err = yaml.Marshal(m); err != nil {
			return nil, err
		}
		out = append(append(out, "---\n"...), data...)
	}
	return out, nil
}

// waiter runs TKG's waits on one Cluster, saying why it still waits.
type waiter struct {
	c       client.Client
	key     client.ObjectKey
	timeout time.Duration
	p       *progress.Printer
}

// poll calls check until it says done; its error carries check's last reason. What to run next
// is the flow's to say (WaysOutError).
func (w waiter) poll(ctx context.Context, what string, check func(*clusterv1.Cluster) (bool, string)) error {
	err := Wait{Client: w.c, Key: w.key, Timeout: w.timeout, Progress: w.p, Observed: w.observed}.Until(ctx, check)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// observed refreshes the cluster's TKGOperationLastObservedTimestamp when its Available
// condition changed since, as TKG's waits do: a wait that sees the cluster move keeps its
// operation from reading as stalled.
func (w waiter) observed(ctx context.Context, c *clusterv1.Cluster) {
	available := conditions.Get(c, clusterv1.AvailableCondition)
	if available == nil || c.Annotations[tkg.AnnotationOperationInfo] == "" {
		return
	}
	if last, ok := tkg.LastObserved(c.Annotations); ok && !available.LastTransitionTime.After(last) {
		return
	}
	before := c.DeepCopy()
	c.Annotations[tkg.AnnotationOperationLastObservedTimestamp] = tkg.Timestamp(time.Now())
	// A refresh that fails is tried again at the next poll.
	_ = w.c.Patch(ctx, c, client.MergeFrom(before))
}

func (w waiter) initialized(ctx context.Context) error {
	w.p.Infof("waiting for cluster to be initialized...")
	last := ""
	return w.poll(ctx, "the cluster's control plane was not initialized", func(c *clusterv1.Cluster) (bool, string) {
		if ptr.Deref(c.Status.Initialization.ControlPlaneInitialized, false) {
			return true, ""
		}
		reason := conditions.GetReason(c, clusterv1.ClusterControlPlaneInitializedCondition)
		if reason != "" && reason != last {
			w.p.Infof("cluster control plane is still being initialized: %s", reason)
			last = reason
		}
		return false, "ControlPlaneInitialized is false: " + conditions.GetMessage(c, clusterv1.ClusterControlPlaneInitializedCondition)
	})
}

func (w waiter) nodes(ctx context.Context) error {
	w.p.Infof("waiting for cluster nodes to be available...")
	return w.poll(ctx, "the cluster's nodes are not available", func(c *clusterv1.Cluster) (bool, string) {
		if conditions.IsTrue(c, clusterv1.AvailableCondition) && !conditions.IsTrue(c, clusterv1.ClusterScalingUpCondition) {
			return true, ""
		}
		return false, "Available is false: " + conditions.GetMessage(c, clusterv1.AvailableCondition)
	})
}

// corePackages waits until the core packages of the cluster's ClusterBootstrap (kapp-controller,
// the CNI, the CPI and CSI) have reconciled, saying so for each.
// notInstalled returns the core packages of a ClusterBootstrap that the addons manager does not
// install: a management cluster's kapp-controller (it runs its own) and the CPI and CSI of
// another infrastructure than the cluster's, which a management cluster's ClusterBootstrap,
// written before its Cluster, names.
func notInstalled(ctx context.Context, c client.Client, key client.ObjectKey, cb *runv1alpha3.ClusterBootstrap) (map[*runv1alpha3.ClusterBootstrapPackage]bool, error) {
	cl := &clusterv1.Cluster{}
	if err := c.Get(ctx, key, cl); err != nil {
		return nil, err
	}
	skip := map[*runv1alpha3.ClusterBootstrapPackage]bool{}
	if _, management := cl.Labels[tkg.LabelManagementCluster]; management {
		skip[cb.Spec.Kapp] = true
	}
	foreign, err := addons.DropForeignProviders(ctx, c, cl, cb.Spec.DeepCopy())
	if err != nil {
		return nil, err
	}
	for _, p := range []*runv1alpha3.ClusterBootstrapPackage{cb.Spec.CPI, cb.Spec.CSI} {
		if p != nil && slices.Contains(foreign, p.RefName) {
			skip[p] = true
		}
	}
	return skip, nil
}

func (w waiter) corePackages(ctx context.Context) error {
	w.p.Infof("waiting for addons core packages installation...")
	done := map[string]bool{}
	var why string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, w.timeout, true, func(ctx context.Context) (bool, error) {
		cb := &runv1alpha3.ClusterBootstrap{}
		if err := w.c.Get(ctx, w.key, cb); err != nil {
			why = "its ClusterBootstrap: " + err.Error()
			return false, nil
		}
		if cb.Spec == nil {
			why = "its ClusterBootstrap has no spec yet"
			return false, nil
		}
		skip, err := notInstalled(ctx, w.c, w.key, cb)
		if err != nil {
			why = err.Error()
			return false, nil
		}
		var waiting []string
		for _, pkg := range []*runv1alpha3.ClusterBootstrapPackage{cb.Spec.Kapp, cb.Spec.CNI, cb.Spec.CPI, cb.Spec.CSI} {
			if pkg == nil || pkg.RefName == "" || strings.HasSuffix(pkg.RefName, "*") || skip[pkg] {
				continue
			}
			name := tkg.PackageInstallName(w.key.Name, pkg.RefName)
			typ := tkg.ConditionPrefix(pkg.RefName) + "-ReconcileSucceeded"
			if !done[name] && cb.Status.Conditions.IsTrue(typ) {
				done[name] = true
				namespace := tkg.SystemNamespace
				if pkg == cb.Spec.Kapp {
					namespace = w.key.Namespace
				}
				w.p.Infof("successfully reconciled package: '%s' in namespace: '%s'", name, namespace)
			}
			if !done[name] {
				waiting = append(waiting, name)
			}
		}
		why = "waiting for packages " + strings.Join(waiting, ", ")
		return len(done) > 0 && len(waiting) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("the cluster's core packages did not reconcile: %s (after %s); `kubectl get clusterbootstrap %s -n %s -o yaml` shows their conditions",
			why, w.timeout, w.key.Name, w.key.Namespace)
	}
	return nil
}
