package node

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/hostlimits"
	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// KubeletKubeconfig is the name of the node agent's kubeconfig in its node directory.
const KubeletKubeconfig = "kubelet.conf"

// Options say which node of which cluster the agent runs.
type Options struct {
	// ClusterDir is the cluster's state directory.
	ClusterDir string
	// Node is the node's name.
	Node string
}

// Agent is a running node agent.
type Agent struct {
	spec              *cluster.Spec
	node              cluster.NodeSpec
	dirs              cluster.Dirs
	executable        string
	bootID            string
	taintControlPlane bool
	// latest is the newest spec read when an address was not in the one the agent started with.
	latest atomic.Pointer[cluster.Spec]

	client client.Client
	config *rest.Config
	// images says which slipway component a pod's image runs, as its config labels it; pods of
	// other images are simulated.
	images     *imageStore
	staticPods []*staticPod
	health     *http.Client
	// healthAnonymous probes without a client certificate.
	healthAnonymous *http.Client
	pods            *podRunner
}

// recordHostLimit keeps, for `local cluster list`, that a process of the node met a host limit.
func (a *Agent) recordHostLimit(ctx context.Context, process string, f hostlimits.Finding) {
	if err := cluster.RecordHostLimit(a.dirs, a.node.Name, process, f); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to record a host limit", "process", process)
	}
}

// Run runs the node until the context ends: its static components on a control-plane node,
// then registration, lease, mirror pods, pods and the kubelet API.
func Run(ctx context.Context, opts Options) error {
	a, err := newAgent(opts)
	if err != nil {
		return err
	}
	log := ctrl.LoggerFrom(ctx).WithValues("node", a.node.Name)
	ctx = ctrl.LoggerInto(ctx, log)

	// Processes of an earlier run of this node (after a kill -9 of the agent) are stopped first,
	// so that ports are free and nothing runs twice.
	if leftovers := proc.Using(a.dirs.Node(a.node.Name)); len(leftovers) > 0 {
		log.Info("Stopping processes of an earlier run", "pids", leftovers)
		if err := proc.Terminate(leftovers, 10*time.Second); err != nil {
			return err
		}
	}

	var wg sync.WaitGroup
	runCtx, cancel := context.WithCancel(ctx)
	// The egress proxy outlives the API server it serves.
	egressCtx, stopEgress := context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		// Pods first, then the control plane in reverse start order, so that the API server
		// still reaches etcd while it shuts down.
		cancel()
		wg.Wait()
		a.pods.wait()
		a.stopControlPlane(log)
		stopEgress()
	}()
	if a.node.Role == cluster.RoleControlPlane {
		if err := a.serveEgress(egressCtx); err != nil {
			return err
		}
		if err := a.startControlPlane(context.WithoutCancel(ctx)); err != nil {
			return err
		}
		if a.node.Join {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a.promoteEtcd(runCtx)
			}()
		}
		if a.spec.LoadBalancerIP != "" {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a.superviseLoadBalancer(runCtx)
			}()
		}
	}
	if err := a.waitForAPIServer(runCtx); err != nil {
		return err
	}
	if a.node.Role == cluster.RoleControlPlane && a.node.Join {
		a.waitEtcdNamed(runCtx)
	}
	if err := a.register(runCtx); err != nil {
		return err
	}
	log.Info("Node registered")
	if a.node.Init {
		if err := a.initCluster(runCtx); err != nil {
			return err
		}
		log.Info("Uploaded the kubeadm configuration and installed kube-proxy and CoreDNS")
	}
	errs := make(chan error, 1)
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := (&kubeletServer{agent: a}).serve(runCtx); err != nil {
			select {
			case errs <- err:
			default:
			}
		}
	}()
	go func() {
		defer wg.Done()
		a.heartbeat(runCtx)
	}()
	if err := a.watchPods(runCtx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		log.Info("Stopping node")
		return nil
	case err := <-errs:
		return err
	}
}

func newAgent(opts Options) (*Agent, error) {
	dirs := cluster.Dirs{Root: opts.ClusterDir}
	spec, err := cluster.ReadSpec(dirs)
	if err != nil {
		return nil, fmt.Errorf("failed to read the cluster: %w", err)
	}
	if err := cluster.ValidateNodeName(opts.Node); err != nil {
		return nil, err
	}
	node, ok := spec.Node(opts.Node)
	if !ok {
		return nil, fmt.Errorf("cluster %s has no node %s", spec.Name, opts.Node)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dirs.Node(node.Name), KubeletKubeconfig))
	if err != nil {
		return nil, fmt.Errorf("failed to load the node's kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, err
	}
	pool, err := newIPPool(node.PodCIDR, node.PodLoopbackCIDR)
	if err != nil {
		return nil, err
	}
	a := &Agent{
		spec: spec, node: node, dirs: dirs, executable: exe, bootID: uuid.NewString(),
		// kubeadm taints control-plane nodes; a local cluster of control-plane nodes only leaves
		// them untainted, as kind does.
		taintControlPlane: spec.Owner != nil || len(spec.Nodes) > len(spec.ControlPlane()),
		client:            c, config: cfg, images: newImageStore(),
	}
	a.pods = &podRunner{agent: a, workers: map[types.UID]*podWorker{}, ips: pool}
	return a, nil
}

// startControlPlane starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler,
// each supervised until stopControlPlane.
func (a *Agent) startControlPlane(ctx context.Context) error {
	set, err := assets.Find()
	if err != nil {
		return err
	}
	var etcdJoin string
	if a.node.Join {
		if etcdJoin, err = a.joinEtcd(ctx); err != nil {
			return err
		}
	}
	static, binaries, err := staticComponents(a.spec, a.node, a.dirs, set, etcdJoin)
	if err != nil {
		return err
	}
	a.health, err = healthClient(a.dirs.NodePKI(a.node.Name))
	if err != nil {
		return err
	}
	a.healthAnonymous = probeClient(nil)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + a.dirs.Node(a.node.Name)}
	for i, c := range static {
		sp := &staticPod{component: c, process: &supervised{
			name: c.name, args: append([]string{binaries[i]}, c.args...), env: env,
			logPath: filepath.Join(a.dirs.NodeLogs(a.node.Name), c.name+".log"), grace: c.grace,
			onHostLimit: func(f hostlimits.Finding) { a.recordHostLimit(ctx, c.name, f) },
		}}
		a.staticPods = append(a.staticPods, sp)
		spCtx, cancel := context.WithCancel(ctx)
		sp.stop, sp.done = cancel, make(chan struct{})
		go func() {
			defer close(sp.done)
			sp.process.run(spCtx)
		}()
	}
	return nil
}

// stopControlPlane stops the static components in reverse start order.
func (a *Agent) stopControlPlane(log logr.Logger) {
	for i := len(a.staticPods) - 1; i >= 0; i-- {
		sp := a.staticPods[i]
		start := time.Now()
		sp.stop()
		<-sp.done
		log.Info("Stopped", "component", sp.component.name, "after", time.Since(start).Round(time.Millisecond).String())
	}
}

// waitForAPIServer waits until the cluster endpoint answers.
func (a *Agent) waitForAPIServer(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(a.config)
	if err != nil {
		return err
	}
	return wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && strings.TrimSpace(string(body)) == "ok", nil
	})
}

// heartbeat renews the Lease every 10s, reports node status every minute and mirror pods every
// 2s, as the kubelet does.
func (a *Agent) heartbeat(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx)
	lease := time.NewTicker(10 * time.Second)
	status := time.NewTicker(time.Minute)
	mirror := time.NewTicker(2 * time.Second)
	defer lease.Stop()
	defer status.Stop()
	defer mirror.Stop()
	a.tick(ctx, log, "lease", a.renewLease)
	a.tick(ctx, log, "mirror pods", a.syncMirrorPods)
	for {
		select {
		case <-ctx.Done():
			return
		case <-lease.C:
			a.tick(ctx, log, "lease", a.renewLease)
		case <-status.C:
			a.tick(ctx, log, "node status", a.updateNodeStatus)
		case <-mirror.C:
			a.tick(ctx, log, "mirror pods", a.syncMirrorPods)
		}
	}
}

// superviseLoadBalancer starts the cluster's load balancer again when it has been dead for
// lbDeadFor, as the kubelet of each control-plane node restarts kube-vip, a static pod. The
// `local` provider restarts it within seconds, and counts it, through the API; but the API of a
// management cluster that manages itself is reached through that very load balancer, so
// without this, its death would be for good.
func (a *Agent) superviseLoadBalancer(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx)
	var deadSince time.Time
	t := time.NewTicker(lbCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if cluster.LoadBalancerRunning(a.dirs) {
			deadSince = time.Time{}
			continue
		}
		if deadSince.IsZero() {
			deadSince = time.Now()
		}
		if time.Since(deadSince) < lbDeadFor {
			continue
		}
		if started, err := cluster.StartLoadBalancerIn(a.dirs, a.executable); err != nil {
			log.Error(err, "Failed to start the cluster's load balancer")
		} else if started {
			log.Info("Started the cluster's load balancer, dead for a while", "after", time.Since(deadSince).Round(time.Second).String())
		}
		deadSince = time.Time{}
	}
}

// A control-plane node's agent looks at its cluster's load balancer every lbCheckEvery and starts
// it once dead for lbDeadFor: longer than the `local` provider takes (3 s), so that it stays the
// one that restarts, and counts, while it can reach the API.
const (
	lbCheckEvery = 5 * time.Second
	lbDeadFor    = 15 * time.Second
)

func (a *Agent) tick(ctx context.Context, log logr.Logger, what string, f func(context.Context) error) {
	if len(a.staticPods) == 0 && what == "mirror pods" {
		return
	}
	if err := f(ctx); err != nil && ctx.Err() == nil {
		log.Error(err, "Failed to update "+what)
	}
}

// watchPods runs the pods bound to this node.
func (a *Agent) watchPods(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(a.config)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", a.node.Name).String()
	}))
	informer := factory.Core().V1().Pods().Informer()
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { a.syncPod(ctx, obj) },
		UpdateFunc: func(_, obj interface{}) { a.syncPod(ctx, obj) },
		DeleteFunc: func(obj interface{}) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				a.pods.remove(pod.UID)
			}
		},
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return nil
}

func (a *Agent) syncPod(ctx context.Context, obj interface{}) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Annotations[annotationMirror] != "" {
		return
	}
	a.pods.sync(ctx, pod.DeepCopy())
}
