// Package propagation is TKG's object-propagation controller: it copies objects of configured
// kinds from a source namespace, such as the ClusterClasses and templates the tkg-clusterclass
// package installs in tkg-system, into every namespace a label selector picks, keeps the copies
// in step with their source, copies into namespaces as they appear, and deletes the copies when
// the source goes.
package propagation
