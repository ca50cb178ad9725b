package capabilities

// RBAC the tanzu-capabilities manager needs, generated into packages/framework.tanzu.vmware.com/0.1.0/bundle/config/tanzu-capabilities.role.generated.yml by `make generate`.
// The Capability rules are above Reconciler.Reconcile.

// Queries run as the service account each Capability names, with a token requested for it.
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch

// The Events users see.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
