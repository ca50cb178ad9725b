package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CapabilitySpec is what a client asks of the cluster.
type CapabilitySpec struct {
	// ServiceAccountName names the service account, in the Capability's namespace, whose
	// permissions the queries run with: what it cannot read counts as not found.
	// +kubebuilder:validation:MinLength=1
	ServiceAccountName string `json:"serviceAccountName"`

	// Queries are evaluated independently; each has a result of the same name.
	// +listType=map
	// +listMapKey=name
	Queries []Query `json:"queries"`
}

// Query groups questions about API groups, objects and schemas under one name.
type Query struct {
	// Name is unique among the Capability's queries.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// GroupVersionResources ask whether API groups, versions and resources are served.
	// +listType=map
	// +listMapKey=name
	// +optional
	GroupVersionResources []QueryGVR `json:"groupVersionResources,omitempty"`

	// Objects ask whether objects exist, optionally with or without annotations.
	// +listType=map
	// +listMapKey=name
	// +optional
	Objects []QueryObject `json:"objects,omitempty"`

	// PartialSchemas ask whether the cluster's OpenAPI schema has a definition containing a
	// fragment.
	// +listType=map
	// +listMapKey=name
	// +optional
	PartialSchemas []QueryPartialSchema `json:"partialSchemas,omitempty"`
}

// QueryGVR asks whether an API group is served, in the listed versions, with the resource.
type QueryGVR struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Group is the API group; "core" or empty is the legacy core group.
	Group string `json:"group"`

	// Versions must all be served. A resource needs at least one version.
	// +optional
	Versions []string `json:"versions,omitempty"`

	// Resource must be served in every listed version.
	// +optional
	Resource string `json:"resource,omitempty"`
}

// QueryObject asks whether an object exists.
type QueryObject struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// ObjectReference names the object by apiVersion, kind, namespace (for namespaced kinds)
	// and name.
	ObjectReference corev1.ObjectReference `json:"objectReference"`

	// WithAnnotations must all be on the object with these values.
	// +optional
	WithAnnotations map[string]string `json:"withAnnotations,omitempty"`

	// WithoutAnnotations must all be absent from the object.
	// +optional
	WithoutAnnotations map[string]string `json:"withoutAnnotations,omitempty"`
}

// QueryPartialSchema asks whether the cluster's OpenAPI v2 document has a definition that
// contains a schema fragment: every key of the fragment present, recursively, with equal values.
type QueryPartialSchema struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// PartialSchema is the fragment, as YAML or JSON.
	// +kubebuilder:validation:MinLength=1
	PartialSchema string `json:"partialSchema"`
}

// CapabilityStatus holds the answers.
type CapabilityStatus struct {
	// Results has one entry per query, of the same name.
	// +listType=map
	// +listMapKey=name
	// +optional
	Results []Result `json:"results,omitempty"`
}

// Result is the answer to one Query.
type Result struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// +listType=map
	// +listMapKey=name
	// +optional
	GroupVersionResources []QueryResult `json:"groupVersionResources,omitempty"`

	// +listType=map
	// +listMapKey=name
	// +optional
	Objects []QueryResult `json:"objects,omitempty"`

	// +listType=map
	// +listMapKey=name
	// +optional
	PartialSchemas []QueryResult `json:"partialSchemas,omitempty"`
}

// QueryResult is the answer to one question.
type QueryResult struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Found is true when everything the question asks for is there.
	Found bool `json:"found"`

	// Error is true when the question could not be answered; ErrorDetail says why.
	// +optional
	Error bool `json:"error,omitempty"`

	// +optional
	ErrorDetail string `json:"errorDetail,omitempty"`

	// NotFoundReason says what was missing when Found is false.
	// +optional
	NotFoundReason string `json:"notFoundReason,omitempty"`
}

// Capability asks the cluster what it can do, with a service account's permissions, and keeps
// the answers in its status. The controller answers again when the spec changes and every
// minute, since what a cluster serves changes as packages come and go.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Capability struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CapabilitySpec   `json:"spec,omitempty"`
	Status CapabilityStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CapabilityList is a list of Capability.
type CapabilityList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Capability `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Capability{}, &CapabilityList{})
}
