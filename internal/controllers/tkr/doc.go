// Package tkr is the TKR service: the Kubernetes release catalogue (TanzuKubernetesRelease and
// OSImage), its resolver and compatibility.
package tkr
