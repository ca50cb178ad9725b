package status

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/resolver"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Reasons of the UpdatesAvailable condition.
const (
	ReasonUpdatesAvailable = "UpdatesAvailable"
	ReasonCannotParseTKR   = "CannotParseTKR"
)

// ClusterReconciler sets a resolved Cluster's UpdatesAvailable condition: True with the newer
// releases its query resolves to in its minor version and the next one (the message lists them
// as TKG does, "[v1.35.4+vmware.1-tkg.1]"), else False with reason AlreadyUpToDate.
type ClusterReconciler struct {
	Client client.Client
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
}

// SetupWithManager registers the reconciler; any release or OSImage change recomputes every
// resolved Cluster. A Cluster is also recomputed when its UpdatesAvailable condition changes:
// a reconcile that read the Cluster from a cache not yet holding its own last write computes no
// difference and patches nothing, and the next look must put the right value back.
func (r *ClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("tkr-status-controller")
	}
	hasTKR := predicate.NewPredicateFuncs(func(o client.Object) bool {
		_, ok := o.GetLabels()[runv1alpha3.LabelTKR]
		return ok
	})
	conditionChanged := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, after := conditions.Get(e.ObjectOld.(*clusterv1.Cluster), runv1alpha3.ConditionUpdatesAvailable),
			conditions.Get(e.ObjectNew.(*clusterv1.Cluster), runv1alpha3.ConditionUpdatesAvailable)
		return (before == nil) != (after == nil) || before != nil && (before.Status != after.Status || before.Message != after.Message)
	}}
	all := handler.EnqueueRequestsFromMapFunc(r.resolvedClusters)
	return ctrl.NewControllerManagedBy(mgr).
		Named("cluster_updates_available").
		For(&clusterv1.Cluster{}, builder.WithPredicates(hasTKR, predicate.Or(predicate.LabelChangedPredicate{}, conditionChanged))).
		Watches(&runv1alpha3.TanzuKubernetesRelease{}, all).
		Watches(&runv1alpha3.OSImage{}, all).
		Complete(r)
}

func (r *ClusterReconciler) resolvedClusters(ctx context.Context, _ client.Object) []ctrl.Request {
	clusters := &clusterv1.ClusterList{}
	if err := r.Client.List(ctx, clusters, client.HasLabels{runv1alpha3.LabelTKR}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list Clusters")
		return nil
	}
	out := make([]ctrl.Request, len(clusters.Items))
	for i, c := range clusters.Items {
		out[i].NamespacedName = client.ObjectKeyFromObject(&c)
	}
	return out
}

// Reconcile computes the Cluster's updates.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	name, ok := cluster.Labels[runv1alpha3.LabelTKR]
	if !ok || !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	helper, err := patch.NewHelper(cluster, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	var was metav1.Condition
	if c := conditions.Get(cluster, runv1alpha3.ConditionUpdatesAvailable); c != nil {
		was = *c
	}
	defer func() {
		if err := helper.Patch(ctx, cluster, patch.WithOwnedConditions{Conditions: []string{runv1alpha3.ConditionUpdatesAvailable}}); err != nil {
			if reterr == nil {
				reterr = client.IgnoreNotFound(err)
			}
			return
		}
		// New releases to upgrade to are worth an Event; none left is not.
		if now := conditions.Get(cluster, runv1alpha3.ConditionUpdatesAvailable); now != nil && now.Status == metav1.ConditionTrue &&
			(was.Status != metav1.ConditionTrue || was.Message != now.Message) {
			r.Recorder.Eventf(cluster, nil, corev1.EventTypeNormal, ReasonUpdatesAvailable, "Check",
				"Kubernetes releases to upgrade to: %s", now.Message)
		}
	}()
	current, err := version.ParseSemantic(tkg.VersionFromLabel(name))
	if err != nil {
		conditions.Set(cluster, metav1.Condition{Type: runv1alpha3.ConditionUpdatesAvailable, Status: metav1.ConditionUnknown, Reason: ReasonCannotParseTKR,
			Message: fmt.Sprintf("cannot read a version from TKR name %q: %v", name, err)})
		return ctrl.Result{}, nil
	}
	updates, err := r.updates(ctx, cluster, current)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(updates) == 0 {
		conditions.Set(cluster, metav1.Condition{Type: runv1alpha3.ConditionUpdatesAvailable, Status: metav1.ConditionFalse, Reason: runv1alpha3.ReasonAlreadyUpToDate})
		return ctrl.Result{}, nil
	}
	conditions.Set(cluster, metav1.Condition{Type: runv1alpha3.ConditionUpdatesAvailable, Status: metav1.ConditionTrue, Reason: ReasonUpdatesAvailable,
		Message: FormatUpdates(updates)})
	return ctrl.Result{}, nil
}

// FormatUpdates writes the releases of an UpdatesAvailable message as TKG does:
// [v1.34.3+vmware.1-tkg.2 v1.35.4+vmware.1-tkg.1].
func FormatUpdates(versions []string) string {
	return "[" + strings.Join(versions, " ") + "]"
}

// ParseUpdates reads the releases of an UpdatesAvailable message.
func ParseUpdates(message string) []string {
	return strings.Fields(strings.Trim(message, "[]"))
}

// updates lists, oldest first, the releases newer than current that the Cluster's query resolves
// to within its minor version and the next.
func (r *ClusterReconciler) updates(ctx context.Context, cluster *clusterv1.Cluster, current *version.Version) ([]string, error) {
	tkrs, images, err := resolver.List(ctx, r.Client)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, minor := range []uint{current.Minor(), current.Minor() + 1} {
		q, ok, err := resolver.ClusterQuery(ctx, r.Client, cluster, fmt.Sprintf("v%d.%d", current.Major(), minor))
		if err != nil || !ok {
			return nil, err
		}
		results, _ := resolver.Candidates(tkrs, images, q)
		for i := len(results) - 1; i >= 0; i-- {
			v := results[i].TKR.Spec.Version
			if tkg.CompareVersions(v, current.String()) > 0 {
				out = append(out, v)
			}
		}
	}
	return out, nil
}
