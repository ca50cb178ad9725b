package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// TestWaitSaysWhyItEnded: a wait ends when its check passes, else says the check's last reason
// after the timeout or an interrupt, and gives up on a cluster that stopped answering only when
// asked to.
func TestWaitSaysWhyItEnded(t *testing.T) {
	cl := topologyCluster(1)
	key := client.ObjectKeyFromObject(cl)
	answering := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(cl).Build()
	silent := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
		},
	}).Build()
	w := Wait{Client: answering, Key: key, Timeout: 300 * time.Millisecond, Progress: progress.ForWriter(&strings.Builder{}), Interval: 10 * time.Millisecond}

	reads := 0
	if err := w.Until(t.Context(), func(*clusterv1.Cluster) (bool, string) { reads++; return reads == 3, "not yet" }); err != nil || reads != 3 {
		t.Errorf("a check that passes at its third read: %v after %d reads", err, reads)
	}
	err := w.Until(t.Context(), func(*clusterv1.Cluster) (bool, string) { return false, "control plane is not available yet" })
	if err == nil || err.Error() != "control plane is not available yet (after 300ms)" {
		t.Errorf("a timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := w.Until(ctx, func(*clusterv1.Cluster) (bool, string) { return false, "nodes are joining" }); err == nil ||
		!strings.HasPrefix(err.Error(), "interrupted while waiting") {
		t.Errorf("an interrupt: %v", err)
	}

	w.Client = silent
	if err := w.Until(t.Context(), func(*clusterv1.Cluster) (bool, string) { return true, "" }); err == nil ||
		!strings.Contains(err.Error(), "connection refused (after 300ms)") {
		t.Errorf("a cluster that does not answer, without Unanswered, is waited on until the timeout: %v", err)
	}
	w.Unanswered, w.Which, w.Timeout = 50*time.Millisecond, "bootstrap cluster tkg-kind-x", time.Minute
	start := time.Now()
	if err := w.Until(t.Context(), func(*clusterv1.Cluster) (bool, string) { return true, "" }); err == nil ||
		!strings.HasPrefix(err.Error(), "the bootstrap cluster tkg-kind-x has not answered for 50ms: ") || time.Since(start) > 10*time.Second {
		t.Errorf("a cluster that stopped answering, with Unanswered: %v after %s", err, time.Since(start))
	}
}
