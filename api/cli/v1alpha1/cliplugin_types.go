package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Target is the part of the tanzu CLI a plugin belongs to.
type Target string

// Targets of the tanzu CLI.
const (
	// TargetKubernetes is the kubernetes target (also written k8s).
	TargetKubernetes Target = "kubernetes"
	// TargetMissionControl is the Tanzu Mission Control target (also written tmc).
	TargetMissionControl Target = "mission-control"
	// TargetNone is for plugins of no target.
	TargetNone Target = ""
)

// Artifact is one binary of a plugin version, for one platform.
type Artifact struct {
	// Image is the OCI image holding the binary.
	Image string `json:"image,omitempty"`
	// URI is the binary's HTTP or local path.
	URI string `json:"uri,omitempty"`
	// Digest is the binary's SHA256.
	Digest string `json:"digest,omitempty"`
	// Type is where the artifact is: oci, S3, GCP.
	Type string `json:"type"`
	// OS is the binary's GOOS.
	OS string `json:"os"`
	// Arch is the binary's GOARCH.
	Arch string `json:"arch"`
}

// ArtifactList is the artifacts of one version, one per platform.
type ArtifactList []Artifact

// CLIPluginSpec describes a plugin.
type CLIPluginSpec struct {
	// Description is what the plugin does.
	Description string `json:"description"`
	// RecommendedVersion is the semantic version the CLI should use against this cluster.
	RecommendedVersion string `json:"recommendedVersion"`
	// Artifacts are the binaries of each version.
	Artifacts map[string]ArtifactList `json:"artifacts"`
	// Optional plugins are not installed by `tanzu plugin sync` or at login.
	Optional bool `json:"optional"`
	// Target is the CLI target the plugin belongs to.
	Target Target `json:"target"`
}

// CLIPlugin is a tanzu CLI plugin recommended for the cluster it is in.
//
// +kubebuilder:object:root=true
// +kubebuilder:printcolumn:name="Recommended Version",type=string,JSONPath=`.spec.recommendedVersion`
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=`.spec.description`
type CLIPlugin struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              CLIPluginSpec `json:"spec"`
}

// CLIPluginList is a list of CLIPlugins.
//
// +kubebuilder:object:root=true
type CLIPluginList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CLIPlugin `json:"items"`
}
