// Package vsphere is TKG's tkr-vsphere-resolver: a mutating webhook on topology Clusters that,
// once the TKR resolver has chosen a release and an OVA OSImage, finds the vCenter VM template of
// that OVA version and OS in the cluster's datacenter and writes its inventory path and managed
// object id into TKR_DATA's osImageRef (template, moid), for the control plane and each machine
// deployment. When no template matches, the Cluster is refused with the OVA version asked for and,
// where one exists, the VM that would match once converted to a template.
package vsphere
