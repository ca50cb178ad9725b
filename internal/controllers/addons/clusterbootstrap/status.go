package clusterbootstrap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/secret"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Condition of a deleting cluster's ClusterBootstrap and its reasons.
const (
	ConditionAdditionalPackagesRemoved = "AdditionalPackagesRemoved"
	ReasonRemovingAdditionalPackages   = "RemovingAdditionalPackages"
	ReasonDeletionTimedOut             = "DeletionTimedOut"
)

// summary is the one condition kapp-controller holds True on a PackageInstall.
func summary(conds []kappctrlv1alpha1.Condition) *kappctrlv1alpha1.Condition {
	for _, t := range []kappctrlv1alpha1.ConditionType{kappctrlv1alpha1.ReconcileFailed, kappctrlv1alpha1.DeleteFailed,
		kappctrlv1alpha1.Reconciling, kappctrlv1alpha1.Deleting, kappctrlv1alpha1.ReconcileSucceeded} {
		for i := range conds {
			if conds[i].Type == t && conds[i].Status == corev1.ConditionTrue {
				return &conds[i]
			}
		}
	}
	return nil
}

// reconcileStatus copies the state of each package's PackageInstall into the ClusterBootstrap
// as one condition per package, <Short>-<kapp condition> (Antrea-ReconcileSucceeded), with
// kapp's useful error message, and records whether every package has succeeded. A package that
// starts failing, and the moment all have succeeded, are recorded as Events.
func (r *Reconciler) reconcileStatus(ctx context.Context, s *scope) error {
	cluster, cb := s.cluster, s.cb
	type source struct {
		pkg       *runv1alpha3.ClusterBootstrapPackage
		c         client.Client
		namespace string
	}
	var sources []source
	if !s.management() && cb.Spec.Kapp != nil {
		sources = append(sources, source{cb.Spec.Kapp, r.Client, cluster.Namespace})
	}
	for _, p := range s.packagesOnRemote() {
		sources = append(sources, source{p, s.remote, r.SystemNamespace})
	}
	wasSettled, settled := true, true
	for _, src := range sources {
		prefix := tkg.ConditionPrefix(src.pkg.RefName) + "-"
		if c := cb.Status.Conditions.Get(prefix + string(kappctrlv1alpha1.ReconcileSucceeded)); c == nil || c.Status != corev1.ConditionTrue {
			wasSettled = false
		}
		pi := &pkgingv1alpha1.PackageInstall{}
		err := src.c.Get(ctx, client.ObjectKey{Namespace: src.namespace, Name: tkg.PackageInstallName(cluster.Name, src.pkg.RefName)}, pi)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		var c *kappctrlv1alpha1.Condition
		if err == nil {
			c = summary(pi.Status.Conditions)
			if src.c == s.remote {
				s.remoteInstalls = append(s.remoteInstalls, pi)
			}
		}
		if c == nil || c.Type != kappctrlv1alpha1.ReconcileSucceeded {
			settled = false
		}
		if c == nil {
			continue
		}
		typ := prefix + string(c.Type)
		if c.Type == kappctrlv1alpha1.ReconcileFailed && cb.Status.Conditions.Get(typ) == nil {
			r.Recorder.Eventf(cb, nil, corev1.EventTypeWarning, ReasonPackageFailed, "Reconcile", "Package %s failed to reconcile on cluster %s: %s",
				src.pkg.RefName, cluster.Name, pi.Status.UsefulErrorMessage)
		}
		kept := cb.Status.Conditions[:0]
		for _, old := range cb.Status.Conditions {
			if !strings.HasPrefix(old.Type, prefix) || old.Type == typ {
				kept = append(kept, old)
			}
		}
		cb.Status.Conditions = kept
		cb.Status.Conditions.Set(runv1alpha3.Condition{Type: typ, Status: c.Status, Reason: c.Reason, Message: pi.Status.UsefulErrorMessage})
	}
	s.settled = settled
	if settled && !wasSettled {
		r.Recorder.Eventf(cb, nil, corev1.EventTypeNormal, ReasonPackagesSucceeded, "Reconcile", "All %d packages of release %s reconciled on cluster %s",
			len(sources), cb.Status.ResolvedTKR, cluster.Name)
	}
	return nil
}

// reconcileDelete removes the cluster's additional packages from the workload cluster, then
// lets the Cluster, its kubeconfig Secret and its ClusterBootstrap go. After DeleteTimeout it
// lets them go anyway, saying so on the ClusterBootstrap.
func (r *Reconciler) reconcileDelete(ctx context.Context, cluster *clusterv1.Cluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cluster, addons.Finalizer) {
		return ctrl.Result{}, nil
	}
	cb := &runv1alpha3.ClusterBootstrap{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cb)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if err == nil && cb.Spec != nil {
		remaining, err := r.removeAdditional(ctx, cluster, cb)
		if err != nil && r.machinesGone(ctx, cluster) {
			// Cluster API has already deleted every machine (it deletes them alongside this
			// wait): the packages went with the nodes, and nothing is left to reach.
			ctrl.LoggerFrom(ctx).Info("The workload cluster's machines are gone; releasing the cluster", "reason", err.Error())
			err, remaining = nil, nil
		}
		if err != nil || len(remaining) > 0 {
			why := fmt.Sprintf("waiting for PackageInstalls %s to be deleted from the workload cluster", strings.Join(remaining, ", "))
			if err != nil {
				why = err.Error()
			}
			left := time.Until(cluster.DeletionTimestamp.Add(r.DeleteTimeout))
			if left > 0 {
				r.setDeleteCondition(ctx, cb, ReasonRemovingAdditionalPackages, why)
				return ctrl.Result{RequeueAfter: min(left, 2*time.Second)}, nil
			}
			message := fmt.Sprintf("gave up after %s: %s; the packages may remain on the workload cluster", r.DeleteTimeout, why)
			r.setDeleteCondition(ctx, cb, ReasonDeletionTimedOut, message)
			r.Recorder.Eventf(cb, cluster, corev1.EventTypeWarning, ReasonDeletionTimedOut, "Delete", "%s", message)
			ctrl.LoggerFrom(ctx).Info("Deletion timed out; releasing the cluster", "timeout", r.DeleteTimeout, "reason", why)
		}
	}
	// Only what exists is released: a typed nil in the list would pass a nil check.
	held := []client.Object{cb, cluster}
	kubeconfig := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: secret.Name(cluster.Name, secret.Kubeconfig)}, kubeconfig); err == nil {
		held = append(held, kubeconfig)
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	for _, o := range held {
		if o.GetUID() == "" || !controllerutil.ContainsFinalizer(o, addons.Finalizer) {
			continue
		}
		patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
		controllerutil.RemoveFinalizer(o, addons.Finalizer)
		if err := r.Client.Patch(ctx, o, patch); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("failed to remove the finalizer of %s: %w", o.GetName(), err)
		}
	}
	return ctrl.Result{}, nil
}

// machinesGone says whether the cluster has no Machine left.
func (r *Reconciler) machinesGone(ctx context.Context, cluster *clusterv1.Cluster) bool {
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(cluster.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name}); err != nil {
		return false
	}
	return len(machines.Items) == 0
}

// removeAdditional deletes the additional packages' PackageInstalls on the workload cluster and
// returns those still there.
func (r *Reconciler) removeAdditional(ctx context.Context, cluster *clusterv1.Cluster, cb *runv1alpha3.ClusterBootstrap) ([]string, error) {
	remote, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(cluster))
	if err != nil {
		return nil, fmt.Errorf("cannot reach the workload cluster to remove its additional packages: %w", err)
	}
	var remaining []string
	for _, p := range cb.Spec.AdditionalPackages {
		pi := &pkgingv1alpha1.PackageInstall{}
		pi.Namespace, pi.Name = r.SystemNamespace, tkg.PackageInstallName(cluster.Name, p.RefName)
		if err := remote.Delete(ctx, pi); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return remaining, fmt.Errorf("failed to delete PackageInstall %s on the workload cluster: %w", klog.KObj(pi), err)
		}
		if err := remote.Get(ctx, client.ObjectKeyFromObject(pi), pi); err == nil {
			remaining = append(remaining, pi.Name)
		} else if !apierrors.IsNotFound(err) {
			return remaining, err
		}
	}
	return remaining, nil
}

func (r *Reconciler) setDeleteCondition(ctx context.Context, cb *runv1alpha3.ClusterBootstrap, reason, message string) {
	patch := client.MergeFrom(cb.DeepCopy())
	cb.Status.Conditions.MarkFalse(ConditionAdditionalPackagesRemoved, reason, runv1alpha3.ConditionSeverityWarning, message)
	if err := r.Client.Status().Patch(ctx, cb, patch); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to record why the deletion waits")
	}
}

// isWaiting reports whether err only says what a package waits for.
func isWaiting(err error) bool {
	var w *errWaiting
	return errors.As(err, &w)
}
