package resolver

// RBAC the tkr-resolver-cluster-webhook needs, generated into packages/tkr-service.tanzu.vmware.com/0.1.0/bundle/config/tkr-resolver-cluster-webhook.role.generated.yml by `make generate`.

// +kubebuilder:rbac:groups=run.tanzu.vmware.com,resources=tanzukubernetesreleases;osimages,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusterclasses,verbs=get;list;watch
// The manager sets its webhook configuration's caBundle.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;list;watch;patch
