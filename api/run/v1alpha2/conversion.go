package v1alpha2

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/slipway-dev/slipway/api/run/v1alpha1"
	"github.com/slipway-dev/slipway/api/run/v1alpha3"
)

// ConvertTo converts this release to the v1alpha3 hub, as v1alpha1's: the fields are the same.
func (r *TanzuKubernetesRelease) ConvertTo(hub conversion.Hub) error {
	return v1alpha1.ToHub(r.ObjectMeta, r.Spec, r.Status, hub.(*v1alpha3.TanzuKubernetesRelease))
}

// ConvertFrom converts the v1alpha3 hub to this release.
func (r *TanzuKubernetesRelease) ConvertFrom(hub conversion.Hub) error {
	var err error
	r.ObjectMeta, r.Spec, r.Status, err = v1alpha1.FromHub(hub.(*v1alpha3.TanzuKubernetesRelease))
	return err
}
