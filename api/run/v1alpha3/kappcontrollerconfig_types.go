package v1alpha3

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KappControllerConfigSpec is the configuration of the kapp-controller package of a cluster.
type KappControllerConfigSpec struct {
	// Namespace kapp-controller is deployed in.
	// +optional
	// +kubebuilder:default:=kube-system
	Namespace string `json:"namespace,omitempty"`

	// KappController configures the controller itself.
	// +optional
	KappController KappController `json:"kappController,omitempty,omitzero"`
}

// KappController configures kapp-controller.
type KappController struct {
	// CreateNamespace creates the namespace kapp-controller is deployed in.
	// +optional
	// +kubebuilder:default:=true
	CreateNamespace *bool `json:"createNamespace,omitempty"`

	// GlobalNamespace holds Package and PackageMetadata objects visible in every namespace.
	// +optional
	// +kubebuilder:default:=tanzu-package-repo-global
	GlobalNamespace string `json:"globalNamespace,omitempty"`

	// Deployment configures kapp-controller's Deployment.
	// +optional
	Deployment KappDeployment `json:"deployment,omitempty,omitzero"`

	// Config is kapp-controller's own configuration.
	// +optional
	Config KappConfig `json:"config,omitempty,omitzero"`
}

// KappDeployment configures kapp-controller's Deployment.
type KappDeployment struct {
	// HostNetwork runs the pod on the host network, as it must before a CNI is installed.
	// +optional
	// +kubebuilder:default:=true
	HostNetwork *bool `json:"hostNetwork,omitempty"`

	// PriorityClassName of the pod.
	// +optional
	// +kubebuilder:default:=system-cluster-critical
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// Concurrency is the number of reconciles run at once.
	// +optional
	// +kubebuilder:default:=4
	Concurrency int `json:"concurrency,omitempty"`

	// Tolerations of the pod.
	// +optional
	// +kubebuilder:default:={{key: CriticalAddonsOnly, operator: Exists}, {effect: NoSchedule, key: node-role.kubernetes.io/master}, {effect: NoSchedule, key: node.kubernetes.io/not-ready}, {effect: NoSchedule, key: node.cloudprovider.kubernetes.io/uninitialized, value: "true"}}
	Tolerations []map[string]string `json:"tolerations,omitempty"`

	// APIPort is the port of kapp-controller's aggregated API.
	// +optional
	// +kubebuilder:default:=10350
	APIPort int `json:"apiPort,omitempty"`

	// MetricsBindAddress is the address of the metrics endpoint; "0" turns it off.
	// +optional
	// +kubebuilder:default:="0"
	MetricsBindAddress string `json:"metricsBindAddress,omitempty"`
}

// KappConfig is kapp-controller's own configuration.
type KappConfig struct {
	// CaCerts are PEM certificates added to the trusted pool; the cluster-wide setting is used
	// when empty.
	// +optional
	CaCerts string `json:"caCerts,omitempty"`

	// HTTPProxy is the proxy for HTTP requests.
	// +optional
	HTTPProxy string `json:"httpProxy,omitempty"`

	// HTTPSProxy is the proxy for HTTPS requests.
	// +optional
	HTTPSProxy string `json:"httpsProxy,omitempty"`

	// NoProxy is a comma-separated list of hosts reached without the proxy.
	// +optional
	NoProxy string `json:"noProxy,omitempty"`

	// DangerousSkipTLSVerify is a comma-separated list of hosts whose TLS certificates are not
	// verified.
	// +optional
	DangerousSkipTLSVerify string `json:"dangerousSkipTLSVerify,omitempty"`
}

// KappControllerConfigStatus is the observed state of a KappControllerConfig.
type KappControllerConfigStatus struct {
	// SecretRef names the data-values Secret written from this object.
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
}

// KappControllerConfig is the configuration of a cluster's kapp-controller package; its
// controller writes it into a data-values Secret.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=kappcontrollerconfigs,shortName=kappconf,scope=Namespaced
// +kubebuilder:printcolumn:name="Namespace",type="string",JSONPath=".spec.namespace",description="The namespace in which kapp-controller is deployed"
// +kubebuilder:printcolumn:name="GlobalNamespace",type="string",JSONPath=".spec.kappController.globalNamespace",description="The namespace value used for global packaging resources"
// +kubebuilder:printcolumn:name="SecretName",type="string",JSONPath=".status.secretRef",description="Name of the kapp-controller data values secret"
type KappControllerConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KappControllerConfigSpec   `json:"spec"`
	Status KappControllerConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// KappControllerConfigList is a list of KappControllerConfig.
type KappControllerConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KappControllerConfig `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &KappControllerConfig{}, &KappControllerConfigList{})
}
