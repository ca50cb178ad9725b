package status

// RBAC the tkr-status-controller needs, generated into packages/tkr-service.tanzu.vmware.com/0.1.0/bundle/config/tkr-status-controller.role.generated.yml by `make generate`.

// +kubebuilder:rbac:groups=run.tanzu.vmware.com,resources=tanzukubernetesreleases;tanzukubernetesreleases/status;osimages;clusterbootstraptemplates,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=data.packaging.carvel.dev,resources=packages,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;clusters/status,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusterclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
