package ui

import (
	"errors"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
)

// listed is a workload cluster as `slipway ui` lists it: `cluster list`'s columns and its
// add-on packages with their state, from its ClusterBootstrap.
type listed struct {
	cluster.Summary
	Packages []packageState `json:"packages"`
}

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
	out := make([]listed, 0, len(summaries))
	for _, sum := range summaries {
		l := listed{Summary: sum, Packages: []packageState{}}
		cb := &runv1alpha3.ClusterBootstrap{}
		if err := c.Get(r.Context(), client.ObjectKey{Namespace: sum.Namespace, Name: sum.Name}, cb); err == nil && cb.Spec != nil {
			for _, p := range addons.Packages(cb.Spec) {
				l.Packages = append(l.Packages, packageState{Name: p.RefName, State: packageStateOf(cb, p.RefName)})
			}
		}
		out = append(out, l)
	}
	writeJSON(w, http.StatusOK, out)
}

// packageStateOf reads a package's state from the ClusterBootstrap's conditions, named
// <Short>-ReconcileSucceeded and <Short>-ReconcileFailed as TKG writes them.
func packageStateOf(cb *runv1alpha3.ClusterBootstrap, refName string) string {
	prefix := addons.ConditionPrefix(refName)
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
