// Package tanzuauth is TKG's tanzu-auth controller manager (its v1alpha3 cascade controller): it
// keeps the pinniped values Secret of every workload cluster in step with the management cluster's
// identity configuration, the ConfigMap kube-public/pinniped-info. With the ConfigMap, a workload
// cluster's Pinniped concierge trusts the management cluster's supervisor (identity management
// type oidc, the supervisor's endpoint and CA bundle, an audience unique to the cluster); without
// it, identity management is none. The management cluster's own Secret is the user's and is left
// alone.
package tanzuauth
