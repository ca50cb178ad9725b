package conversion

// RBAC the tkr-conversion-webhook needs, generated into packages/tkr-service.tanzu.vmware.com/0.1.0/bundle/config/tkr-conversion-webhook.role.generated.yml by `make generate`.

// The manager sets the caBundle of the TanzuKubernetesRelease CRD's conversion webhook; it looks
// for the name among webhook configurations first.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;list;watch
