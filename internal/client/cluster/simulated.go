package cluster

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/cluster-api/controllers/remote"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/images"
)

// SimulatedWorkloads lists, through the cluster's kubeconfig Secret (Cluster API's
// remote.RESTConfig), the workloads whose pods run stand-in images (see simulated), sorted and
// each once; a cluster that does not answer within timeout is an error. standIns are the
// stand-ins' digests (images.StandInDigests), which tell a stand-in copied into one repository.
func SimulatedWorkloads(ctx context.Context, c client.Client, key client.ObjectKey, standIns map[string]bool, timeout time.Duration) ([]string, error) {
	cfg, err := remote.RESTConfig(ctx, "slipway", c, key)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = timeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := []string{}
	for i := range pods.Items {
		if p := &pods.Items[i]; simulated(p, standIns) {
			out = append(out, workloadOf(p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// simulated says whether a pod is simulated: a container of it runs a stand-in image, by its
// name or by one of the stand-ins' digests.
func simulated(p *corev1.Pod, standIns map[string]bool) bool {
	return slices.ContainsFunc(p.Spec.Containers, func(c corev1.Container) bool { return images.IsStandIn(c.Image, standIns) })
}

// workloadOf names the workload a pod belongs to, as a user finds it with kubectl: its
// DaemonSet, StatefulSet or Job, the Deployment of its ReplicaSet (the ReplicaSet's name without
// its hash), or the pod itself.
func workloadOf(p *corev1.Pod) string {
	name := p.Name
	if owner := metav1.GetControllerOf(p); owner != nil {
		name = owner.Name
		if owner.Kind == "ReplicaSet" {
			if hash := p.Labels["pod-template-hash"]; hash != "" {
				name = strings.TrimSuffix(name, "-"+hash)
			}
		}
	}
	return p.Namespace + "/" + name
}

// PrintSimulated prints, after `cluster get`'s add-ons, the workloads of the cluster that run
// stand-in images, so that a package reconciled on this host is not taken for one at work.
func PrintSimulated(out io.Writer, workloads []string, err error) {
	switch {
	case err != nil:
		fmt.Fprintf(out, "\n\nSimulated workloads: not known, the cluster did not answer: %v\n", err)
	case len(workloads) > 0:
		fmt.Fprint(out, "\n\nSimulated on this host (stand-in images that do none of their work):\n\n")
		for _, w := range workloads {
			fmt.Fprintf(out, "  %s\n", w)
		}
	}
}
