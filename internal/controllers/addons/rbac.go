package addons

// RBAC the tanzu-addons-manager needs, generated into packages/addons-manager.tanzu.vmware.com/0.1.0/bundle/config/tanzu-addons-manager.role.generated.yml by `make generate`.
// The role is generated from internal/controllers/addons/...: the Events marker above the
// ClusterBootstrap controller's Reconcile joins these.

// The manager sets its webhook configurations' caBundle.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;clusterclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=run.tanzu.vmware.com;cni.tanzu.vmware.com;cpi.tanzu.vmware.com;csi.tanzu.vmware.com;packaging.carvel.dev,resources=*,verbs=*
// +kubebuilder:rbac:groups=data.packaging.carvel.dev;infrastructure.cluster.x-k8s.io,resources=*,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=*
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=*
