package source

// RBAC the tkr-source-controller needs, generated into packages/tkr-source-controller.tanzu.vmware.com/0.1.0/bundle/config/tkr-source-controller.role.generated.yml by `make generate`.

// +kubebuilder:rbac:groups=run.tanzu.vmware.com;cni.tanzu.vmware.com;cpi.tanzu.vmware.com;csi.tanzu.vmware.com,resources=*,verbs=*
// +kubebuilder:rbac:groups=data.packaging.carvel.dev,resources=packages,verbs=*
// +kubebuilder:rbac:groups="",resources=configmaps;secrets,verbs=*
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
