package node

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/local/hostlimits"
)

// AnnotationSimulated marks a pod whose containers the local runtime reports without running.
const AnnotationSimulated = "local.slipway.dev/simulated"

// simulatedStartDelay is how long a simulated container takes to start.
const simulatedStartDelay = time.Second

// containerRun is one container of a pod and what became of it.
type containerRun struct {
	spec corev1.Container
	init bool
	// component is the slipway component the container runs; empty when it is simulated.
	component string

	proc       *process
	startAt    time.Time // when the next start may happen
	running    time.Time // since when it runs; zero when not
	ready      bool
	lastProbe  time.Time
	restarts   int32
	last       *corev1.ContainerStateTerminated
	final      *corev1.ContainerStateTerminated // set when it will not start again
	waiting    string
	waitingMsg string
	backoff    *backoff
}

type containerExit struct {
	name string
	exit exit
	proc *process
}

// podWorker runs one pod bound to the node.
type podWorker struct {
	agent *Agent
	// namespace and name never change; pod is the newest version, owned by the run loop.
	namespace, name string
	pod             *corev1.Pod
	dir             string
	// ip is the loopback address the pod's processes listen on; podIP is its network address.
	ip, podIP string
	updates   chan *corev1.Pod
	gone      chan struct{}
	stopped   chan struct{} // closed when run returns
	exits     chan containerExit

	containers     []*containerRun
	simulated      bool
	tokenExpiry    time.Time
	tokenIssued    time.Time
	volumesWritten time.Time
	probeClient    *http.Client
}

func newPodWorker(a *Agent, pod *corev1.Pod, ip, podIP string) *podWorker {
	w := &podWorker{
		agent:       a,
		namespace:   pod.Namespace,
		name:        pod.Name,
		pod:         pod,
		dir:         filepath.Join(a.dirs.Node(a.node.Name), "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID)),
		ip:          ip,
		podIP:       podIP,
		updates:     make(chan *corev1.Pod, 1),
		gone:        make(chan struct{}),
		stopped:     make(chan struct{}),
		exits:       make(chan containerExit, 8),
		simulated:   true,
		probeClient: &http.Client{Timeout: time.Second, Transport: insecureTransport()},
	}
	add := func(c corev1.Container, init bool) {
		run := &containerRun{spec: c, init: init, backoff: crashLoopBackoff(), waiting: "ContainerCreating"}
		if name, ok := a.componentFor(c.Image); ok {
			run.component = name
			w.simulated = false
		}
		w.containers = append(w.containers, run)
	}
	for _, c := range pod.Spec.InitContainers {
		add(c, true)
	}
	for _, c := range pod.Spec.Containers {
		add(c, false)
	}
	return w
}

// update hands the worker the newest version of its pod.
func (w *podWorker) update(pod *corev1.Pod) {
	select {
	case <-w.updates:
	default:
	}
	w.updates <- pod
}

func (w *podWorker) run(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx).WithValues("Pod", client.ObjectKeyFromObject(w.pod))
	ctx = ctrl.LoggerInto(ctx, log)
	defer close(w.stopped)
	if err := os.MkdirAll(filepath.Join(w.dir, "logs"), 0o700); err != nil {
		log.Error(err, "Failed to create pod directory")
	}
	if w.simulated {
		w.markSimulated(ctx)
	}
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		if w.pod.DeletionTimestamp != nil {
			w.terminate(ctx)
			return
		}
		w.step(ctx)
		if err := w.agent.patchPodStatus(ctx, w.pod, w.status()); err != nil && !apierrors.IsNotFound(err) {
			log.V(2).Info("Failed to report pod status", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			w.stopAll(5 * time.Second)
			return
		case <-w.gone:
			w.stopAll(time.Duration(ptr.Deref(w.pod.DeletionGracePeriodSeconds, 0)) * time.Second)
			_ = os.RemoveAll(w.dir)
			return
		case pod := <-w.updates:
			w.pod = pod
		case e := <-w.exits:
			w.handleExit(e)
		case <-ticker.C:
		}
	}
}

// markSimulated annotates a pod whose containers are simulated, so that users can tell.
func (w *podWorker) markSimulated(ctx context.Context) {
	if w.pod.Annotations[AnnotationSimulated] == "true" {
		return
	}
	orig := w.pod.DeepCopy()
	if w.pod.Annotations == nil {
		w.pod.Annotations = map[string]string{}
	}
	w.pod.Annotations[AnnotationSimulated] = "true"
	if err := w.agent.client.Patch(ctx, w.pod, client.MergeFrom(orig)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to mark pod simulated")
	}
}

// step starts what is due, refreshes volumes and probes readiness.
func (w *podWorker) step(ctx context.Context) {
	if !w.simulated && w.volumesDue() {
		if err := w.writeVolumes(ctx); err != nil {
			w.setWaiting("ContainerCreating", err.Error())
			return
		}
	}
	now := time.Now()
	for _, c := range w.containers {
		if c.final != nil {
			continue
		}
		if c.running.IsZero() && !now.Before(c.startAt) {
			w.start(ctx, c)
		}
		if c.init && c.final == nil {
			// Later containers wait for this init container to complete.
			return
		}
		w.probe(c)
	}
}

func (w *podWorker) volumesDue() bool {
	if w.volumesWritten.IsZero() || time.Since(w.volumesWritten) > time.Minute {
		return true
	}
	// Refresh the service-account token at 80% of its life, as the kubelet does.
	return !w.tokenExpiry.IsZero() && time.Now().After(w.tokenIssued.Add(w.tokenExpiry.Sub(w.tokenIssued)*4/5))
}

func (w *podWorker) setWaiting(reason, message string) {
	for _, c := range w.containers {
		if c.running.IsZero() && c.final == nil {
			c.waiting, c.waitingMsg = reason, message
		}
	}
}

// start starts a container: a component as a child process, anything else simulated.
func (w *podWorker) start(ctx context.Context, c *containerRun) {
	logPath := w.logPath(c.spec.Name)
	if _, err := os.Stat(logPath); err == nil {
		_ = os.Rename(logPath, w.previousLogPath(c.spec.Name))
	}
	if c.component == "" {
		if time.Since(w.pod.CreationTimestamp.Time) < simulatedStartDelay && !c.init {
			return
		}
		msg := fmt.Sprintf("slipway local runtime: image %s is simulated; no process runs for container %s\n", c.spec.Image, c.spec.Name)
		_ = os.WriteFile(logPath, []byte(msg), 0o600)
		if c.init {
			c.final = &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: metav1.Now(), FinishedAt: metav1.Now()}
			return
		}
		c.running, c.ready = time.Now(), true
		return
	}
	env, err := w.env(ctx, &c.spec)
	if err != nil {
		c.waiting, c.waitingMsg = "CreateContainerConfigError", err.Error()
		c.startAt = time.Now().Add(5 * time.Second)
		return
	}
	args := append([]string{w.agent.executable, "component", "run", "--pod-dir", w.dir, c.component, "--"}, containerArgs(&c.spec)...)
	p, err := startProcess(args, env, logPath)
	if err != nil {
		c.waiting, c.waitingMsg = "StartError", err.Error()
		c.startAt = time.Now().Add(c.backoff.after(0))
		return
	}
	c.proc, c.running, c.ready, c.waiting, c.waitingMsg = p, p.started, false, "", ""
	go func() {
		<-p.done
		select {
		case w.exits <- containerExit{name: c.spec.Name, exit: p.result, proc: p}:
		case <-w.stopped:
		}
	}()
}

// containerArgs are the arguments a component receives: the command after its program, then
// the args.
func containerArgs(c *corev1.Container) []string {
	var args []string
	if len(c.Command) > 1 {
		args = append(args, c.Command[1:]...)
	}
	return append(args, c.Args...)
}

// handleExit records a container's end and schedules its restart as the restart policy says.
func (w *podWorker) handleExit(e containerExit) {
	for _, c := range w.containers {
		if c.spec.Name != e.name || c.proc != e.proc {
			continue
		}
		reason := "Completed"
		if e.exit.code != 0 {
			reason = "Error"
		}
		term := &corev1.ContainerStateTerminated{
			ExitCode: int32(e.exit.code), Reason: reason,
			StartedAt: metav1.NewTime(c.proc.started), FinishedAt: metav1.NewTime(e.exit.finished),
			ContainerID: containerID(c),
		}
		if e.exit.code != 0 {
			// As the kubelet's FallbackToLogsOnError, and only for a host limit: its message says
			// which, and `local cluster list` shows it.
			if f, ok := hostlimits.ExplainFile(w.logPath(c.spec.Name)); ok {
				term.Message = f.String()
				w.agent.recordHostLimit(context.Background(), fmt.Sprintf("pod %s/%s container %s", w.namespace, w.name, c.spec.Name), f)
			}
		}
		ranFor := e.exit.finished.Sub(c.proc.started)
		c.proc, c.running, c.ready = nil, time.Time{}, false
		policy := w.pod.Spec.RestartPolicy
		restart := policy == corev1.RestartPolicyAlways || (policy == corev1.RestartPolicyOnFailure && e.exit.code != 0)
		if c.init && e.exit.code == 0 {
			restart = false
		}
		if !restart {
			c.final = term
			return
		}
		c.last = term
		c.restarts++
		c.startAt = time.Now().Add(c.backoff.after(ranFor))
		c.waiting, c.waitingMsg = "CrashLoopBackOff", fmt.Sprintf("back-off restarting failed container %s in pod %s", c.spec.Name, w.pod.Name)
	}
}

// probe runs a container's HTTP readiness probe; a container without one is ready once it runs.
func (w *podWorker) probe(c *containerRun) {
	if c.running.IsZero() || c.component == "" {
		return
	}
	rp := c.spec.ReadinessProbe
	if rp == nil || rp.HTTPGet == nil {
		c.ready = true
		return
	}
	period := time.Duration(max(rp.PeriodSeconds, 1)) * time.Second
	if time.Since(c.lastProbe) < min(period, 2*time.Second) || time.Since(c.running) < time.Duration(rp.InitialDelaySeconds)*time.Second {
		return
	}
	c.lastProbe = time.Now()
	port := rp.HTTPGet.Port.IntValue()
	if port == 0 {
		port = namedPort(&c.spec, rp.HTTPGet.Port.String())
	}
	scheme := "http"
	if rp.HTTPGet.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	c.ready = probe(w.probeClient, fmt.Sprintf("%s://%s:%d%s", scheme, w.ip, port, rp.HTTPGet.Path))
}

func namedPort(c *corev1.Container, name string) int {
	for _, p := range c.Ports {
		if p.Name == name {
			return int(p.ContainerPort)
		}
	}
	return 0
}

func containerID(c *containerRun) string {
	if c.proc == nil {
		return ""
	}
	return fmt.Sprintf("slipway://%d", c.proc.cmd.Process.Pid)
}

// status builds the pod's status from its containers.
func (w *podWorker) status() corev1.PodStatus {
	var inits, regular []corev1.ContainerStatus
	for _, c := range w.containers {
		s := corev1.ContainerStatus{
			Name: c.spec.Name, Image: c.spec.Image, ImageID: c.spec.Image,
			Ready: c.ready && !c.running.IsZero(), RestartCount: c.restarts, Started: ptr.To(!c.running.IsZero()),
			ContainerID: containerID(c),
		}
		if c.component == "" && !c.running.IsZero() {
			s.ContainerID = "slipway://simulated"
		}
		switch {
		case c.final != nil:
			s.State.Terminated = c.final
			s.ContainerID = c.final.ContainerID
		case !c.running.IsZero():
			s.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(c.running)}
		default:
			s.State.Waiting = &corev1.ContainerStateWaiting{Reason: c.waiting, Message: c.waitingMsg}
		}
		if c.last != nil {
			s.LastTerminationState.Terminated = c.last
		}
		if c.init {
			inits = append(inits, s)
		} else {
			regular = append(regular, s)
		}
	}
	return podStatus(w.pod, regular, inits, w.podIP, w.agent.node.Address)
}

// terminate stops the containers within the pod's grace period and removes the pod, as the
// kubelet does once a pod is marked for deletion.
func (w *podWorker) terminate(ctx context.Context) {
	grace := time.Duration(ptr.Deref(w.pod.DeletionGracePeriodSeconds, 30)) * time.Second
	w.stopAll(grace)
	err := w.agent.client.Delete(ctx, w.pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &w.pod.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to remove terminated pod")
	}
	_ = os.RemoveAll(w.dir)
}

// stopAll stops every running process, all within the grace period.
func (w *podWorker) stopAll(grace time.Duration) {
	var wg sync.WaitGroup
	for _, c := range w.containers {
		if c.proc == nil {
			continue
		}
		wg.Add(1)
		go func(p *process) {
			defer wg.Done()
			p.stop(max(grace, time.Second))
		}(c.proc)
	}
	wg.Wait()
}

func (w *podWorker) logPath(container string) string {
	return filepath.Join(w.dir, "logs", container+".log")
}

func (w *podWorker) previousLogPath(container string) string {
	return filepath.Join(w.dir, "logs", container+".previous.log")
}

// podRunner keeps one worker per pod bound to the node.
type podRunner struct {
	agent   *Agent
	mu      sync.Mutex
	workers map[types.UID]*podWorker
	ips     *ipPool
	running sync.WaitGroup
}

// wait waits until every worker has stopped its processes.
func (r *podRunner) wait() { r.running.Wait() }

func (r *podRunner) sync(ctx context.Context, pod *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.workers[pod.UID]; ok {
		w.update(pod)
		return
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		if pod.DeletionTimestamp == nil {
			return
		}
	}
	ip, podIP := r.agent.node.IP, r.agent.node.Address
	if !pod.Spec.HostNetwork {
		ip, podIP = r.ips.allocate(pod.Status.PodIP)
	}
	w := newPodWorker(r.agent, pod, ip, podIP)
	r.workers[pod.UID] = w
	r.running.Add(1)
	go func() {
		defer r.running.Done()
		w.run(ctx)
		r.mu.Lock()
		delete(r.workers, pod.UID)
		r.mu.Unlock()
		if !pod.Spec.HostNetwork {
			r.ips.release(podIP)
		}
	}()
}

func (r *podRunner) remove(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.workers[uid]; ok {
		select {
		case <-w.gone:
		default:
			close(w.gone)
		}
	}
}

// worker returns the worker of a pod, if the pod runs here.
func (r *podRunner) worker(namespace, name string) *podWorker {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.workers {
		if w.namespace == namespace && w.name == name {
			return w
		}
	}
	return nil
}
