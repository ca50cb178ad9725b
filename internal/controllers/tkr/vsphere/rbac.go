package vsphere

// RBAC the tkr-vsphere-resolver-webhook needs, generated into packages/tkr-vsphere-resolver.tanzu.vmware.com/0.1.0/bundle/config/tkr-vsphere-resolver-webhook.role.generated.yml by `make generate`.

// The vCenter credentials of a cluster: the Secret named after it, in its namespace.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// The manager sets its webhook configuration's caBundle.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;list;watch;patch
