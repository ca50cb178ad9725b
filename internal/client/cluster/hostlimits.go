package cluster

import (
	"context"
	"strings"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	"github.com/slipway-dev/slipway/internal/progress"
)

// HostLimitWatch tells a waiting command when the local provider cannot start a node of the
// cluster because this host reached one of its limits: the wait would otherwise run to its
// timeout saying only that a machine is not ready.
type HostLimitWatch struct {
	P    *progress.Printer
	seen map[string]bool
}

// Check returns the messages of the cluster's LocalMachines held by a host limit, joined, and
// prints each the first time it is seen.
func (w *HostLimitWatch) Check(ctx context.Context, c client.Client, key client.ObjectKey) string {
	var machines infrav1.LocalMachineList
	if err := c.List(ctx, &machines, client.InNamespace(key.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: key.Name}); err != nil {
		return "" // a cluster of another provider, or a moment without an answer
	}
	var held []string
	for i := range machines.Items {
		m := &machines.Items[i]
		if conditions.GetReason(m, infrav1.NodeStartedCondition) != infrav1.ReasonHostLimitReached {
			continue
		}
		msg := "machine " + m.Name + " cannot start: " + conditions.GetMessage(m, infrav1.NodeStartedCondition)
		held = append(held, msg)
		if w.seen == nil {
			w.seen = map[string]bool{}
		}
		if !w.seen[msg] {
			w.seen[msg] = true
			w.P.Infof("Warning: %s", msg)
		}
	}
	return strings.Join(held, "; ")
}
