// Package conversion is TKG's tkr-conversion-webhook: it serves the TanzuKubernetesRelease CRD's
// conversion webhook, converting releases between the v1alpha1 and v1alpha2 shapes that clients of
// TKG 1.x and vSphere with Tanzu read and the stored v1alpha3.
package conversion
