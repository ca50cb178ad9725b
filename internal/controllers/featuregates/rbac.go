package featuregates

// RBAC the tanzu-featuregates manager needs, generated into packages/featuregates.tanzu.vmware.com/0.1.0/bundle/config/tanzu-featuregates.role.generated.yml by `make generate`.

// +kubebuilder:rbac:groups=core.tanzu.vmware.com,resources=features;featuregates,verbs=get;list;watch
// +kubebuilder:rbac:groups=core.tanzu.vmware.com,resources=features/status;featuregates/status,verbs=get;update;patch
// The manager sets its webhook's caBundle; it looks among both kinds of webhook configuration.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
