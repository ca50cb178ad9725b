// Package managementcluster holds the flows of `slipway management-cluster`: create (TKG's
// InitRegion: a bootstrap cluster, the payload, the management Cluster, the payload again on it,
// the pivot with clusterctl move), get, kubeconfig, upgrade and delete.
//
// Where the code is:
//   - create.go: the create flow, step by step; validate.go its checks before anything starts;
//   - initregion.go and bom.go: TKG's bootstrap payload, as tanzu-framework's InitRegion installs
//     it on its kind cluster (seeds/000): kapp-controller rendered from the management package
//     repository, the Cluster API providers with clusterctl init, then the management package
//     repository and the tkg-pkg meta-package, waiting until every one of its children has
//     reconciled; bootstrap.go a bootstrap cluster with that payload;
//   - saved.go: the admin kubeconfigs slipway's home keeps, and the current management cluster;
//   - delete.go, upgrade.go, get.go, metadata.go, ceip.go, credentials.go: the other verbs.
package managementcluster
