// Package scheme builds the runtime.Scheme that slipway's clients, controllers and tests share:
// Kubernetes' built-in kinds, CRDs, Cluster API's kinds, Carvel's packaging kinds and slipway's
// TKG-compatible APIs.
package scheme
