package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/kubeconfig"
	"github.com/slipway-dev/slipway/internal/pki"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// CreateOptions are what `slipway local cluster create` takes. Invalid options are refused
// with a *field.Error whose field is the option's name in lower camel case.
type CreateOptions struct {
	Name              string
	KubernetesVersion string
	ControlPlaneNodes int
	WorkerNodes       int
	// Kubeconfig is the file the cluster's context is merged into; empty means kubectl's.
	Kubeconfig string
	// Wait is how long to wait for the nodes to be Ready; zero does not wait.
	Wait time.Duration
	// Retain keeps the cluster's processes and state when creation fails, for inspection.
	Retain bool
	// CAs are the cluster's authorities; nil generates them.
	CAs *pki.CAs
	// HostRegistries are registries on this host's loopback that real nodes pull from besides
	// the local registry (HostRegistry), the custom image repository's; the caller has checked
	// that each answers on the host's bridge address too (CheckHostRegistries).
	HostRegistries []string
	// Egress are the destinations off the bridge real nodes reach through the host (Spec.Egress),
	// each checked by ResolveEgress before anything starts.
	Egress []string
	// Executable is the slipway binary that runs the nodes' init processes and the load
	// balancer; empty means this one.
	Executable string
	// Progress prints kind's step lines; nil prints nothing.
	Progress *progress.Printer
}

// validate checks the options and the host before anything starts.
func (s Store) validate(opts *CreateOptions) error {
	dirs, err := s.Dirs(opts.Name)
	if err != nil {
		return err
	}
	if opts.KubernetesVersion == "" {
		opts.KubernetesVersion = assets.DefaultKubernetesVersion()
	}
	if opts.ControlPlaneNodes < 1 {
		return field.Invalid(field.NewPath("controlPlaneNodes"), opts.ControlPlaneNodes, "a cluster needs at least one control-plane node")
	}
	if opts.WorkerNodes < 0 {
		return field.Invalid(field.NewPath("workerNodes"), opts.WorkerNodes, "use 0 or more")
	}
	if _, err := os.Stat(dirs.Root); err == nil {
		if spec, err := ReadSpec(dirs); err == nil && spec.Owner != nil {
			return fmt.Errorf("the name %q is taken by the local cluster of %s; or choose another name", opts.Name, spec.Owner.Describe())
		}
		return fmt.Errorf("local cluster %q already exists: delete it with `slipway local cluster delete %s` or choose another name", opts.Name, opts.Name)
	}
	if !slices.Contains(assets.KubernetesVersions, opts.KubernetesVersion) {
		return field.Invalid(field.NewPath("kubernetesVersion"), opts.KubernetesVersion, "not supported: use one of "+strings.Join(assets.KubernetesVersions, ", "))
	}
	if _, _, err := ResolveEgress(opts.Egress); err != nil {
		return field.Invalid(field.NewPath("egress"), opts.Egress, err.Error())
	}
	return nil
}

// Create builds a local cluster and merges its context into the kubeconfig.
func (s Store) Create(ctx context.Context, opts CreateOptions) (err error) {
	if err := s.validate(&opts); err != nil {
		return err
	}
	// The block is chosen, and the spec that holds it written, under the store's lock.
	unlock, err := s.LockBlocks()
	if err != nil {
		return err
	}
	defer unlock()
	index, err := s.FreeIndex()
	if err != nil {
		return err
	}
	spec := NewSpec(opts.Name, opts.KubernetesVersion, index, opts.ControlPlaneNodes, opts.WorkerNodes)
	spec.HostRegistries = opts.HostRegistries
	spec.Egress = opts.Egress
	workers := len(spec.Nodes) - len(spec.ControlPlane())
	if err := s.CheckHostLimits(len(spec.ControlPlane()), workers, func(msg string) { opts.Progress.Infof("%s", msg) }); err != nil {
		return err
	}
	if opts.Executable == "" {
		if opts.Executable, err = os.Executable(); err != nil {
			return err
		}
	}
	dirs, err := s.Dirs(opts.Name)
	if err != nil {
		return err
	}
	p := opts.Progress
	b := &boot{store: s, dirs: dirs, spec: spec, exe: opts.Executable, start: time.Now()}
	p.Infof("Creating cluster %q ...", opts.Name)
	// Nothing has started before the binaries are known to be there; from then on, a failure
	// deletes the cluster, or keeps it with Retain.
	started := false
	defer func() {
		if err == nil || !started {
			return
		}
		if opts.Retain {
			p.Infof("Creation failed; the cluster is kept for inspection: logs are in %s", dirs.Root)
			return
		}
		if derr := s.Delete(opts.Name, ""); derr != nil {
			err = errors.Join(err, fmt.Errorf("cleaning up: %w", derr))
		}
	}()
	image := "slipway real node: containerd, kubelet, kubeadm"
	steps := []progress.NamedStep{
		{Name: fmt.Sprintf("Ensuring node image (%s, Kubernetes %s) 🖼", image, spec.KubernetesVersion), Run: func(ctx context.Context) error {
			err := b.ensureImage(ctx)
			started = err == nil
			return err
		}},
		{Name: "Preparing nodes 📦", Run: func(context.Context) error {
			defer unlock()
			return s.prepare(dirs, spec, opts.CAs, b.registry)
		}},
		{Name: "Writing configuration 📜", Run: b.writeConfiguration},
	}
	steps = append(steps, b.nodeSteps()...)
	if opts.Wait > 0 {
		steps = append(steps, progress.NamedStep{Name: fmt.Sprintf("Waiting %s for control-plane = Ready ⏳", opts.Wait), Run: func(ctx context.Context) error {
			return waitForNodes(ctx, b.cfg, spec.ControlPlane(), b.start, opts.Wait)
		}})
	}
	if err := p.Run(ctx, p.Announced(steps...)...); err != nil {
		return err
	}
	if opts.Wait > 0 {
		p.Infof(" • Ready after %s 💚", time.Since(b.start).Round(time.Second))
	}
	path := opts.Kubeconfig
	if path == "" {
		path = kubeconfig.DefaultPath()
	}
	if err := s.MergeKubeconfig(opts.Name, path); err != nil {
		return err
	}
	p.Infof("Set kubectl context to %q\nYou can now use your cluster with:\n\nkubectl cluster-info --context %s --kubeconfig %s",
		ContextName(opts.Name), ContextName(opts.Name), path)
	return nil
}

// boot is a new cluster as the steps of its creation share it: what one step makes, a later
// one uses.
type boot struct {
	store Store
	dirs  Dirs
	spec  *Spec
	// exe is the slipway binary the nodes run.
	exe   string
	start time.Time
	// registry is the local registry real nodes pull their images from, once the image step
	// made sure of it.
	registry string
	// cfg reaches the cluster's API server once the configuration is written.
	cfg *rest.Config
	// c is the client apply made from cfg, for the steps after it.
	c client.Client
}

// apply applies the runtime's manifests to the cluster, rendered for it.
func (b *boot) apply(ctx context.Context, manifests ...string) error {
	if b.c == nil {
		c, err := client.New(b.cfg, client.Options{Scheme: scheme.New()})
		if err != nil {
			return err
		}
		b.c = c
	}
	values := newManifestValues()
	for _, m := range manifests {
		if err := applyManifest(ctx, b.c, m, values); err != nil {
			return err
		}
	}
	return nil
}

// ensureImage checks that what a node of the cluster runs is built and that the local registry
// serves its images.
func (b *boot) ensureImage(ctx context.Context) (err error) {
	b.registry, err = b.store.EnsureNodeImage(ctx, b.spec.KubernetesVersion)
	return err
}

// writeConfiguration writes the cluster's kubeconfig and configuration and reads the former.
func (b *boot) writeConfiguration(context.Context) (err error) {
	if err := b.store.writeConfiguration(b.dirs, b.spec); err != nil {
		return err
	}
	b.cfg, err = clientcmd.BuildConfigFromFlags("", b.dirs.Kubeconfig())
	return err
}

// workers are the cluster's worker nodes.
func (b *boot) workers() []NodeSpec { return b.spec.Nodes[len(b.spec.ControlPlane()):] }

// prepare writes the spec, the CAs and every node's state and cloud-init.
func (s Store) prepare(dirs Dirs, spec *Spec, cas *pki.CAs, registryAddr string) error {
	if err := WriteSpec(dirs, spec); err != nil {
		return err
	}
	var err error
	if cas == nil {
		if cas, err = pki.GenerateCAs(); err != nil {
			return err
		}
	}
	if err := cas.Write(dirs.PKI()); err != nil {
		return err
	}
	return prepareNodes(dirs, spec, cas, registryAddr)
}

// writeConfiguration writes the administrator kubeconfig.
func (s Store) writeConfiguration(dirs Dirs, spec *Spec) error {
	cas, err := pki.ReadCAs(dirs.PKI())
	if err != nil {
		return err
	}
	return pki.WriteKubeconfig(dirs.Kubeconfig(), cas, spec.Name, spec.Endpoint(), "kubernetes-admin", []string{"system:masters"})
}

// waitForAPI waits until the API server answers /readyz.
func waitForAPI(ctx context.Context, cfg *rest.Config, timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && strings.TrimSpace(string(body)) == "ok", nil
	})
}

// waitForNodes waits until the nodes are registered and Ready, with a heartbeat since the
// given time.
func waitForNodes(ctx context.Context, cfg *rest.Config, want []NodeSpec, since time.Time, timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var notReady []string
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		notReady = nil
		for _, n := range want {
			node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil || !nodeReady(node, since) {
				notReady = append(notReady, n.Name)
			}
		}
		return len(notReady) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("nodes %s are not Ready: %w", strings.Join(notReady, ", "), err)
	}
	return nil
}

func nodeReady(node *corev1.Node, since time.Time) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue && !c.LastHeartbeatTime.Time.Before(since.Truncate(time.Second))
		}
	}
	return false
}
