// Package config reads TKG's flat configuration files (the VARIABLE: value files of
// `tanzu management-cluster create -f` and `tanzu cluster create -f`), applies TKG's defaults
// and rules, and turns the result into a ClusterClass Cluster and what goes with it (the
// vSphere credentials Secret, a ClusterBootstrap). It is shared by the management-cluster and
// cluster flows, so that both read a file the same way.
package config
