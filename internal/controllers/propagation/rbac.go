package propagation

// RBAC the object-propagation-controller needs, generated into packages/tkg-clusterclass.tanzu.vmware.com/0.1.0/bundle/config/object-propagation-controller.role.generated.yml by `make generate`.
// These are the kinds tkg-clusterclass's configuration names for every provider; the provider's
// infrastructure templates are added to the role by an overlay in object-propagation.yml.

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusterclasses,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=kubeadmcontrolplanetemplates,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=kubeadmconfigtemplates,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
