// Package tkg is TKG's vocabulary, in one place whichever side of slipway reads it: the
// namespaces of the management packages, the label of the management cluster's own Cluster, the
// TKGOperationInfo annotations the CLI's flows write, the labels, annotations and object names of
// the addons manager (addons.go), and the release versions' and OSImages' labels and the release
// order (release.go). It is a leaf:
// the flows, the controllers and the components import it, and it imports nothing of slipway's
// (`make verify` checks).
package tkg

const (
	// SystemNamespace holds TKG's management packages, the ClusterBootstrapTemplates, the
	// releases' Packages and the template *Configs on the management cluster, and the packages
	// on every workload cluster.
	SystemNamespace = "tkg-system"

	// PackageRepoGlobalNamespace is kapp-controller's packaging global namespace in TKG's
	// package when none is configured: its Packages are visible from every namespace.
	PackageRepoGlobalNamespace = "tanzu-package-repo-global"

	// LabelClusterRolePrefix begins the labels that give a Cluster its roles, the role being
	// the rest of the key.
	LabelClusterRolePrefix = "cluster-role.tkg.tanzu.vmware.com/"
	// LabelManagementCluster marks the management cluster's own Cluster.
	LabelManagementCluster = LabelClusterRolePrefix + "management"

	// AnnotationTKGVersion on the management cluster's Cluster is its TKG version, which
	// decides the releases it can run.
	AnnotationTKGVersion = "TKGVERSION"
	// AnnotationEdition on the management cluster's Cluster is the TKG edition ("tkg").
	AnnotationEdition = "edition"
	// AnnotationPlan on a Cluster is the plan it was made with (dev, prod).
	AnnotationPlan = "tkg/plan"
	// AnnotationOperationInfo and AnnotationOperationLastObservedTimestamp on a Cluster record
	// the CLI operation under way (create, upgrade, delete) and when it was last seen.
	AnnotationOperationInfo                  = "TKGOperationInfo"
	AnnotationOperationLastObservedTimestamp = "TKGOperationLastObservedTimestamp"
)
