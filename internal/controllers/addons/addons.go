package addons

import (
	"time"
)

// Names of the addons manager's own, as TKG's addons manager gives them; the labels and
// annotations it shares with the CLI are internal/tkg's.
const (
	// Finalizer holds a Cluster, its kubeconfig Secret and its ClusterBootstrap until the
	// cluster's additional packages are removed.
	Finalizer = "tkg.tanzu.vmware.com/addon"

	// SecretTypeClusterBootstrap is the type of the values Secrets the controller clones or
	// writes from inline values.
	SecretTypeClusterBootstrap = "clusterbootstrap-secret"

	// ValuesKey is the key of a values Secret.
	ValuesKey = "values.yaml"

	// ServiceAccount, ClusterRole and ClusterRoleBinding are what the workload cluster's package
	// controller installs the packages as.
	ServiceAccount     = "tanzu-cluster-bootstrap-sa"
	ClusterRole        = "tanzu-cluster-bootstrap-clusterrole"
	ClusterRoleBinding = "tanzu-cluster-bootstrap-clusterrolebinding"

	// PackageInstallSyncPeriod is the syncPeriod of the PackageInstalls the controller makes.
	PackageInstallSyncPeriod = 10 * time.Minute
)
