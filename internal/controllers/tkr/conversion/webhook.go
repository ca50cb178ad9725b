package conversion

import (
	ctrl "sigs.k8s.io/controller-runtime"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
)

// SetupWebhookWithManager registers the conversion webhook of TanzuKubernetesReleases, at
// /convert: the conversions are the API types' own, v1alpha3 being the hub.
func SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &runv1alpha3.TanzuKubernetesRelease{}).Complete()
}
