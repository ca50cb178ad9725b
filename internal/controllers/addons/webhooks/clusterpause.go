package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// ClusterPausePath is where the Cluster pause webhook is served.
const ClusterPausePath = "/mutate-cluster-x-k8s-io-v1beta2-cluster"

// ClusterPause pauses a Cluster whose release label changes, so that Cluster API rolls out no
// machine before the ClusterBootstrap controller has moved the packages to the new release; it
// records the release in tkg.tanzu.vmware.com/paused, and the controller unpauses.
type ClusterPause struct {
	Client client.Reader
}

var _ admission.Defaulter[*clusterv1.Cluster] = &ClusterPause{}

// SetupWebhookWithManager registers the webhook at ClusterPausePath.
func (w *ClusterPause) SetupWebhookWithManager(mgr ctrl.Manager) error {
	if w.Client == nil {
		w.Client = mgr.GetAPIReader()
	}
	return ctrl.NewWebhookManagedBy(mgr, &clusterv1.Cluster{}).WithDefaulter(w).WithDefaulterCustomPath(ClusterPausePath).Complete()
}

// Default pauses the Cluster when its TKR label differs from the stored Cluster's.
func (w *ClusterPause) Default(ctx context.Context, cluster *clusterv1.Cluster) error {
	tkr, ok := cluster.Labels[runv1alpha3.LabelTKR]
	if !ok {
		return nil
	}
	current := &clusterv1.Cluster{}
	if err := w.Client.Get(ctx, client.ObjectKeyFromObject(cluster), current); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // creation: nothing to move yet
		}
		return err
	}
	if current.Labels[runv1alpha3.LabelTKR] == tkr {
		return nil
	}
	if t := (&runv1alpha3.TanzuKubernetesRelease{}); current.Labels[runv1alpha3.LabelTKR] != "" &&
		w.Client.Get(ctx, client.ObjectKey{Name: current.Labels[runv1alpha3.LabelTKR]}, t) == nil {
		if _, legacy := t.Labels[runv1alpha3.LabelLegacyTKR]; legacy {
			return nil
		}
	}
	cluster.Spec.Paused = ptr.To(true)
	if cluster.Annotations == nil {
		cluster.Annotations = map[string]string{}
	}
	cluster.Annotations[tkg.AnnotationPaused] = tkr
	ctrl.LoggerFrom(ctx).Info("Pausing the cluster until its packages follow the new release", "Cluster", klog.KObj(cluster), "TanzuKubernetesRelease", tkr)
	return nil
}
