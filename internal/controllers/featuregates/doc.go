// Package featuregates is TKG's tanzu-featuregates controller manager: it computes each Feature's
// activation from its stability policy and the FeatureGate that references it, reports each
// reference's outcome in the FeatureGate's status, and validates FeatureGates so that a toggle a
// policy forbids is refused with the reason and the fix.
package featuregates
