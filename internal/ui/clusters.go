package ui

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/cluster-api/controllers/remote"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/images"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// listed is a workload cluster as `slipway ui` lists it: `cluster list`'s columns and its
// add-on packages with their state, from its ClusterBootstrap, and the workloads whose pods the
// local runtime simulates (a reconciled package may run nothing).
type listed struct {
	cluster.Summary
	Packages []packageState `json:"packages"`
	// Simulated are the workloads (namespace/name) of the cluster's simulated pods; Reached
	// says whether the cluster answered, so that none simulated is told from none known.
	Simulated []string `json:"simulated"`
	Reached   bool     `json:"reached"`
}

// reachTimeout bounds the list of one workload cluster's pods.
const reachTimeout = 5 * time.Second

// packageState is one add-on package of a cluster: reconciled, failed or reconciling.
type packageState struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

func (s *Server) clusters(w http.ResponseWriter, r *http.Request) {
	if s.o.Workload == nil {
		apiError(w, http.StatusNotFound, errors.New("the installer of a management cluster lists no clusters: `slipway ui` does"))
		return
	}
	c := s.o.Workload.Client
	summaries, err := cluster.List(r.Context(), c, cluster.ListOptions{AllNamespaces: true})
	if err != nil {
		apiError(w, http.StatusBadGateway, err)
		return
	}
	// Each cluster is read at once: one that does not answer costs reachTimeout, not the sum.
	out := make([]listed, len(summaries))
	var wg sync.WaitGroup
	for i, sum := range summaries {
		wg.Go(func() {
			l := listed{Summary: sum, Packages: []packageState{}, Simulated: []string{}}
			key := client.ObjectKey{Namespace: sum.Namespace, Name: sum.Name}
			cb := &runv1alpha3.ClusterBootstrap{}
			if err := c.Get(r.Context(), key, cb); err == nil && cb.Spec != nil {
				for _, p := range addons.Packages(cb.Spec) {
					l.Packages = append(l.Packages, packageState{Name: p.RefName, State: packageStateOf(cb, p.RefName)})
				}
			}
			if simulated, err := simulatedWorkloads(r.Context(), c, key, s.o.Workload.StandIns); err == nil {
				l.Simulated, l.Reached = simulated, true
			}
			out[i] = l
		})
	}
	wg.Wait()
	writeJSON(w, http.StatusOK, out)
}

// simulatedWorkloads lists, through the cluster's kubeconfig Secret (Cluster API's
// remote.RESTConfig), the workloads whose pods are simulated (see simulated), sorted and each
// once.
func simulatedWorkloads(ctx context.Context, c client.Client, key client.ObjectKey, standIns map[string]bool) ([]string, error) {
	cfg, err := remote.RESTConfig(ctx, "slipway-ui", c, key)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = reachTimeout
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

// workloadOf names the workload a pod belongs to: its DaemonSet, StatefulSet or Job, the
// Deployment of its ReplicaSet (the ReplicaSet's name without its hash), or the pod itself.
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

// packageStateOf reads a package's state from the ClusterBootstrap's conditions, named
// <Short>-ReconcileSucceeded and <Short>-ReconcileFailed as TKG writes them.
func packageStateOf(cb *runv1alpha3.ClusterBootstrap, refName string) string {
	prefix := tkg.ConditionPrefix(refName)
	for _, c := range cb.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch string(c.Type) {
		case prefix + "-ReconcileSucceeded":
			return "reconciled"
		case prefix + "-ReconcileFailed":
			return "failed"
		}
	}
	return "reconciling"
}
