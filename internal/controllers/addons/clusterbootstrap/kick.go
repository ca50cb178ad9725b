package clusterbootstrap

import (
	"context"
	"fmt"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/controllers/addons"
)

// AnnotationKick is set on a PackageInstall of the workload cluster while the controller kicks
// it: its value is the start of the abandoned deploy that the kick replaces.
const AnnotationKick = "addons.slipway.dev/kick"

// ReasonPackageKicked is the Event of a package kicked.
const ReasonPackageKicked = "PackageKicked"

// reconcileAbandoned starts again the deploy of each package on the workload cluster that its
// kapp-controller abandoned, as `kctrl package installed kick` does: its PackageInstall paused,
// then, once kapp-controller has paused its App, resumed.
//
// kapp-controller (v0.50.0) runs an App's deploy in its memory and records it in the App's status
// as it goes. When its pod dies during a deploy (its node drained by an upgrade's roll while the
// release's packages are upgraded), the App keeps the status Reconciling, and the kapp-controller
// that replaces it takes that unfinished deploy's start for the last reconcile: it deploys again
// only after the App's sync period, the 10 minutes of addons.PackageInstallSyncPeriod, and the
// cluster's packages wait as long. A deploy is abandoned when every kapp-controller running on
// the cluster started after it.
func (r *Reconciler) reconcileAbandoned(ctx context.Context, s *scope) error {
	var reader client.Client
	var controllerStart time.Time
	// The PackageInstalls are those reconcileStatus read, before this phase.
	for _, pi := range s.remoteInstalls {
		_, kicking := pi.Annotations[AnnotationKick]
		if !kicking && (pi.Spec.Paused || !isReconciling(pi)) {
			continue
		}
		if reader == nil {
			// The App and the pods are read once, where needed, without starting an informer
			// for them on every workload cluster.
			var err error
			if reader, err = r.ClusterCache.GetUncachedClient(ctx, client.ObjectKeyFromObject(s.cluster)); err != nil {
				return err
			}
			if controllerStart, err = r.kappControllerStart(ctx, reader); err != nil {
				return err
			}
		}
		app := &kappctrlv1alpha1.App{}
		if err := reader.Get(ctx, client.ObjectKeyFromObject(pi), app); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if kicking {
			if err := r.resume(ctx, s, pi, app); err != nil {
				return err
			}
			continue
		}
		deploy := app.Status.Deploy
		if deploy == nil || deploy.Finished || controllerStart.IsZero() || !controllerStart.After(deploy.StartedAt.Time) {
			continue
		}
		patch := client.MergeFrom(pi.DeepCopy())
		if pi.Annotations == nil {
			pi.Annotations = map[string]string{}
		}
		pi.Annotations[AnnotationKick] = deploy.StartedAt.UTC().Format(time.RFC3339)
		pi.Spec.Paused = true
		if err := s.remote.Patch(ctx, pi, patch); err != nil {
			return fmt.Errorf("failed to pause PackageInstall %s on the workload cluster to kick it: %w", klog.KObj(pi), err)
		}
		ctrl.LoggerFrom(ctx).Info("Kicking a package whose deploy its kapp-controller abandoned", "packageInstall", klog.KObj(pi),
			"deployStarted", deploy.StartedAt.Time, "kappControllerStarted", controllerStart)
	}
	return nil
}

// resume ends a kick once kapp-controller has seen the pause: its App is paused at the
// generation it observed. Resumed, the App's spec differs from what kapp-controller last
// observed, which makes it deploy at once.
func (r *Reconciler) resume(ctx context.Context, s *scope, pi *pkgingv1alpha1.PackageInstall, app *kappctrlv1alpha1.App) error {
	if !app.Spec.Paused || app.Status.ObservedGeneration != app.Generation {
		return nil
	}
	abandoned := pi.Annotations[AnnotationKick]
	patch := client.MergeFrom(pi.DeepCopy())
	delete(pi.Annotations, AnnotationKick)
	pi.Spec.Paused = false
	if err := s.remote.Patch(ctx, pi, patch); err != nil {
		return fmt.Errorf("failed to resume PackageInstall %s on the workload cluster: %w", klog.KObj(pi), err)
	}
	r.Recorder.Eventf(s.cb, nil, corev1.EventTypeNormal, ReasonPackageKicked, "Reconcile",
		"Package %s on cluster %s kicked: its deploy of %s was abandoned by a kapp-controller that is gone, which would have waited its %s sync period",
		pi.Name, s.cluster.Name, abandoned, addons.PackageInstallSyncPeriod)
	return nil
}

// kappControllerStart is when the oldest kapp-controller running on the cluster started (its
// container's start), or zero when none runs.
func (r *Reconciler) kappControllerStart(ctx context.Context, c client.Client) (time.Time, error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(r.SystemNamespace), client.MatchingLabels{"app": "kapp-controller"}); err != nil {
		return time.Time{}, fmt.Errorf("failed to list the kapp-controller pods of the workload cluster: %w", err)
	}
	var oldest time.Time
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name != "kapp-controller" || cs.State.Running == nil {
				continue
			}
			if started := cs.State.Running.StartedAt.Time; oldest.IsZero() || started.Before(oldest) {
				oldest = started
			}
		}
	}
	return oldest, nil
}

// isReconciling says whether kapp-controller reports the PackageInstall as reconciling.
func isReconciling(pi *pkgingv1alpha1.PackageInstall) bool {
	c := summary(pi.Status.Conditions)
	return c != nil && c.Type == kappctrlv1alpha1.Reconciling
}
