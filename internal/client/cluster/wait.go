package cluster

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/progress"
)

// Wait polls one Cluster until a check says it is done: every wait of the CLI's flows on a
// Cluster is one, the cluster flows' and the management-cluster create's on its bootstrap
// cluster. While the Cluster is not done, a host limit that holds its nodes back is the reason
// given.
type Wait struct {
	Client   client.Client
	Key      client.ObjectKey
	Timeout  time.Duration
	Progress *progress.Printer
	// Interval is how often the Cluster is read; 0 is pollInterval.
	Interval time.Duration
	// Observed, when set, sees each Cluster read (TKG's operation timestamp).
	Observed func(context.Context, *clusterv1.Cluster)
	// Unanswered, when set, ends the wait once the API server, of the cluster Which names, has
	// not answered for that long: a cluster whose processes were killed does not come back, and
	// waiting out the timeout would only hide it.
	Unanswered time.Duration
	Which      string
	// UntilGone ends the wait, done, when the Cluster is not found: the wait of a delete.
	UntilGone bool
}

// Until calls check with the Cluster until it says done. Its error says why it still waited:
// check's last reason, after the timeout or an interrupt, or the cluster that stopped answering.
func (w Wait) Until(ctx context.Context, check func(*clusterv1.Cluster) (bool, string)) error {
	interval := w.Interval
	if interval == 0 {
		interval = pollInterval
	}
	var why string
	var silentSince time.Time
	limits := HostLimitWatch{P: w.Progress}
	err := wait.PollUntilContextTimeout(ctx, interval, w.Timeout, true, func(ctx context.Context) (bool, error) {
		c := &clusterv1.Cluster{}
		if err := w.Client.Get(ctx, w.Key, c); err != nil {
			if w.UntilGone && apierrors.IsNotFound(err) {
				return true, nil
			}
			why = err.Error()
			if _, answered := err.(apierrors.APIStatus); answered || ctx.Err() != nil || w.Unanswered == 0 {
				silentSince = time.Time{}
				return false, nil
			}
			if silentSince.IsZero() {
				silentSince = time.Now()
			}
			if time.Since(silentSince) >= w.Unanswered {
				return false, fmt.Errorf("the %s has not answered for %s: %w", w.Which, w.Unanswered, err)
			}
			return false, nil
		}
		silentSince = time.Time{}
		if w.Observed != nil {
			w.Observed(ctx, c)
		}
		done, reason := check(c)
		why = reason
		if held := limits.Check(ctx, w.Client, w.Key); !done && held != "" {
			why = held
		}
		return done, nil
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted while waiting: %s", why)
	case wait.Interrupted(err):
		return fmt.Errorf("%s (after %s)", why, w.Timeout)
	}
	return err
}
