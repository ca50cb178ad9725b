package infrastructure

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/finalizers"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/paused"
	"sigs.k8s.io/cluster-api/util/predicates"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// openPass begins a pass of the LocalCluster or LocalMachine reconciler as Cluster API's
// providers begin theirs. While the Cluster is paused (clusterctl move, or the annotation), the
// Paused condition says so and nothing else is touched. Then the finalizer, then a patch helper
// from the object as read, so that a condition only brought to a new generation in memory is
// written too. It returns a nil closePass when the pass ends here (a write it made comes back as
// an event); else closePass, deferred, patches the object, owning the given conditions and
// Paused, and adds its failure to *reterr.
func openPass(ctx context.Context, c client.Client, owner *clusterv1.Cluster, obj paused.ConditionSetter, finalizer string, owned ...string) (closePass func(reterr *error), err error) {
	read := obj.DeepCopyObject().(client.Object)
	if isPaused, requeue, err := paused.EnsurePausedCondition(ctx, c, owner, obj); err != nil || isPaused || requeue {
		return nil, err
	}
	if done, err := finalizers.EnsureFinalizer(ctx, c, obj, finalizer); err != nil || done {
		return nil, err
	}
	helper, err := patch.NewHelper(read, c)
	if err != nil {
		return nil, err
	}
	conditions := append(owned, clusterv1.PausedCondition)
	return func(reterr *error) {
		if err := helper.Patch(ctx, obj, patch.WithOwnedConditions{Conditions: conditions}); err != nil {
			*reterr = kerrors.NewAggregate([]error{*reterr, client.IgnoreNotFound(err)})
		}
	}, nil
}

// pauseTransitions passes the Cluster events a provider's objects follow: a Cluster created
// unpaused, and every change of spec.paused, so that their Paused condition follows it.
func pauseTransitions(scheme *runtime.Scheme, log logr.Logger) predicate.Funcs {
	return predicates.Any(scheme, log, predicates.ClusterCreateNotPaused(scheme, log), predicates.ClusterPausedTransitions(scheme, log))
}
