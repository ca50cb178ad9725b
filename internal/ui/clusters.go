package ui

import (
	"errors"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
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
			if simulated, err := cluster.SimulatedWorkloads(r.Context(), c, key, s.o.Workload.StandIns, reachTimeout); err == nil {
				l.Simulated, l.Reached = simulated, true
			}
			out[i] = l
		})
	}
	wg.Wait()
	writeJSON(w, http.StatusOK, out)
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
