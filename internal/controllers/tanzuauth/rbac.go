package tanzuauth

// RBAC the tanzu-auth manager needs, generated into packages/tanzu-auth.tanzu.vmware.com/0.1.0/bundle/config/tanzu-auth.role.generated.yml by `make generate`.

// The pinniped values Secrets of workload clusters, in every namespace.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;patch
// kube-public/pinniped-info, the management cluster's supervisor.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
