package v1alpha3

// Hub marks v1alpha3 as the version the v1alpha1 and v1alpha2 releases convert through.
func (*TanzuKubernetesRelease) Hub() {}
