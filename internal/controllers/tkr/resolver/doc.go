// Package resolver picks, for a Cluster's control plane and each machine deployment, the newest
// TanzuKubernetesRelease and its OSImages that satisfy a Kubernetes version prefix, a TKR label
// selector and an OSImage label selector, skipping incompatible, deactivated and invalid
// releases. When nothing resolves, it says what was asked, what exists and why each candidate
// was rejected.
package resolver
