// Package source is TKG's TKR source controller: it fetches the release catalogue from a registry
// (the compatibility metadata and the TKR package repository), installs each release's package
// (TanzuKubernetesRelease, OSImages, ClusterBootstrapTemplate, bootstrap Packages and *Config
// templates), and marks each release Compatible or not with the management cluster's TKG version.
package source
