package node

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/local/cluster"
)

// Annotations the kubelet and kubeadm put on static pods.
const (
	annotationMirror         = "kubernetes.io/config.mirror"
	annotationConfigHash     = "kubernetes.io/config.hash"
	annotationConfigSource   = "kubernetes.io/config.source"
	annotationAPIEndpoint    = "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint"
	annotationEtcdClientURLs = "kubeadm.kubernetes.io/etcd.advertise-client-urls"
)

// staticPod runs one static component and publishes its mirror pod.
type staticPod struct {
	component staticComponent
	process   *supervised
	healthy   bool
	stop      context.CancelFunc
	done      chan struct{}
}

func mirrorPodName(component, node string) string { return component + "-" + node }

// healthClient probes the static components; etcd wants a client certificate.
func healthClient(pkiDir string) (*http.Client, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(pkiDir, "etcd/healthcheck-client.crt"), filepath.Join(pkiDir, "etcd/healthcheck-client.key"))
	if err != nil {
		return nil, err
	}
	return probeClient([]tls.Certificate{cert}), nil
}

// probeClient is an HTTPS client for the node's own components, presenting certs (none for an
// anonymous probe).
func probeClient(certs []tls.Certificate) *http.Client {
	return &http.Client{
		Timeout: 2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			Certificates: certs,
			// The probe only asks whether the component on this node's own address answers.
			InsecureSkipVerify: true, //nolint:gosec
		}},
	}
}

func probe(c *http.Client, url string) bool {
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// desiredMirrorPod returns the mirror pod of a static component.
func (a *Agent) desiredMirrorPod(sp *staticPod, node *corev1.Node) *corev1.Pod {
	c := sp.component
	hash := sha256.Sum256([]byte(strings.Join(append([]string{c.image}, c.args...), "\x00")))
	hashHex := hex.EncodeToString(hash[:16])
	annotations := map[string]string{
		annotationMirror:       hashHex,
		annotationConfigHash:   hashHex,
		annotationConfigSource: "file",
	}
	switch c.name {
	case "kube-apiserver":
		annotations[annotationAPIEndpoint] = fmt.Sprintf("%s:%d", a.node.Address, cluster.APIServerPort)
	case "etcd":
		annotations[annotationEtcdClientURLs] = fmt.Sprintf("https://%s:%d", a.node.IP, cluster.EtcdPort)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        mirrorPodName(c.name, a.node.Name),
			Namespace:   metav1.NamespaceSystem,
			Labels:      map[string]string{"component": c.name, "tier": "control-plane"},
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID, Controller: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			NodeName:          a.node.Name,
			HostNetwork:       true,
			PriorityClassName: "system-node-critical",
			Priority:          ptr.To[int32](2000001000),
			RestartPolicy:     corev1.RestartPolicyAlways,
			Tolerations:       []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			Containers: []corev1.Container{{
				Name:    c.name,
				Image:   c.image,
				Command: append([]string{c.name}, c.args...),
				Ports:   []corev1.ContainerPort{{Name: "probe-port", ContainerPort: int32(c.port), Protocol: corev1.ProtocolTCP}},
			}},
		},
	}
}

// syncMirrorPods creates missing mirror pods and reports each component's real state.
func (a *Agent) syncMirrorPods(ctx context.Context) error {
	node := &corev1.Node{}
	if err := a.client.Get(ctx, client.ObjectKey{Name: a.node.Name}, node); err != nil {
		return err
	}
	var errs []error
	for _, sp := range a.staticPods {
		// Only etcd wants the client certificate; the others are probed anonymously, as the
		// kubelet probes them, since an API server refuses a certificate of another CA that shares
		// its CA's name (Cluster API names every CA "kubernetes").
		prober := a.healthAnonymous
		if sp.component.name == "etcd" {
			prober = a.health
		}
		sp.healthy = probe(prober, sp.component.health)
		want := a.desiredMirrorPod(sp, node)
		pod := &corev1.Pod{}
		err := a.client.Get(ctx, client.ObjectKeyFromObject(want), pod)
		if apierrors.IsNotFound(err) {
			if err := a.client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
				errs = append(errs, err)
				continue
			}
			pod = want
		} else if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := a.reportMirrorStatus(ctx, pod, sp); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("failed to sync mirror pods: %v", errs)
	}
	return nil
}

func (a *Agent) reportMirrorStatus(ctx context.Context, pod *corev1.Pod, sp *staticPod) error {
	running, started, restarts, last := sp.process.state()
	cs := corev1.ContainerStatus{
		Name:         sp.component.name,
		Image:        sp.component.image,
		ImageID:      sp.component.image,
		Ready:        running && sp.healthy,
		Started:      ptr.To(running),
		RestartCount: int32(restarts),
	}
	if running {
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}
		cs.ContainerID = fmt.Sprintf("slipway://%s-%d", sp.component.name, started.Unix())
	} else {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off restarting failed container"}
	}
	if last != nil {
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: int32(last.code), Signal: 0, Reason: "Error", FinishedAt: metav1.NewTime(last.finished)}
	}
	status := podStatus(pod, []corev1.ContainerStatus{cs}, nil, a.node.Address, a.node.Address)
	return a.patchPodStatus(ctx, pod, status)
}
