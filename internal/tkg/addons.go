package tkg

import "strings"

// Labels, annotations and object names of TKG's addons manager.
const (
	// LabelClusterName and LabelPackageName mark the Secrets and provider objects cloned or
	// written for one cluster's package.
	LabelClusterName = "tkg.tanzu.vmware.com/cluster-name"
	LabelPackageName = "tkg.tanzu.vmware.com/package-name"
	// LabelAddonName marks a Secret an add-on reads (pinniped's values) with the add-on's name.
	LabelAddonName = "tkg.tanzu.vmware.com/addon-name"

	// AnnotationClusterName and AnnotationClusterNamespace on a PackageInstall name the
	// Cluster it was made for.
	AnnotationClusterName      = "tkg.tanzu.vmware.com/cluster-name"
	AnnotationClusterNamespace = "tkg.tanzu.vmware.com/cluster-namespace"

	// AnnotationTemplateConfig marks a *Config that is part of a ClusterBootstrapTemplate: it
	// is cloned for clusters, never turned into values itself.
	AnnotationTemplateConfig = "tkg.tanzu.vmware.com/template-config"

	// AnnotationPaused is set with spec.paused by the Cluster pause webhook when a Cluster's
	// release changes; its value is the new release. The ClusterBootstrap controller unpauses
	// the Cluster once the packages are moved to that release.
	AnnotationPaused = "tkg.tanzu.vmware.com/paused"
)

// ShortName is a package's short name, the first part of its refName:
// antrea.tanzu.vmware.com gives antrea.
func ShortName(refName string) string {
	return strings.SplitN(refName, ".", 2)[0]
}

// PackageInstallName is the name of a cluster's PackageInstall of a package: {cluster}-{short}.
func PackageInstallName(cluster, refName string) string {
	return cluster + "-" + ShortName(refName)
}

// DataValuesSecretName is the name of the values Secret of a cluster's package, both the one a
// *Config controller writes on the management cluster and its copy on the workload cluster:
// {cluster}-{short}-data-values.
func DataValuesSecretName(cluster, refName string) string {
	return cluster + "-" + ShortName(refName) + "-data-values"
}

// PackageConfigName is the name of the objects cloned for a cluster's package: the provider
// object (such as an AntreaConfig) and the Secret of inline or secretRef values:
// {cluster}-{short}-package.
func PackageConfigName(cluster, refName string) string {
	return cluster + "-" + ShortName(refName) + "-package"
}

// ConditionPrefix is the prefix of a package's ClusterBootstrap conditions, its short name in
// title case as TKG writes it: vsphere-cpi gives Vsphere-Cpi, as in Vsphere-Cpi-ReconcileSucceeded.
func ConditionPrefix(refName string) string {
	words := strings.Split(ShortName(refName), "-")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, "-")
}

// LabelValue makes a package name usable as a label value: '+' becomes '---', the value is cut
// to 63 characters and trailing separators are dropped, as TKG does.
func LabelValue(s string) string {
	s = strings.ReplaceAll(s, "+", "---")
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.TrimRight(s, "_.-")
}
