package config

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// VSphere is where and as whom a cluster's VMs are made.
type VSphere struct {
	Server, Username, Password string
	// TLSThumbprint is the vCenter certificate's; empty when VSPHERE_INSECURE is true.
	TLSThumbprint string
	Insecure      bool
	// Datacenter, Datastore, StoragePolicyID, Network, ResourcePool and Folder are inventory
	// paths or names in vCenter.
	Datacenter, Datastore, StoragePolicyID, Network, ResourcePool, Folder string
	// CloneMode is fullClone or linkedClone.
	CloneMode string
	// SSHAuthorizedKey is the capv user's public key on every node.
	SSHAuthorizedKey string
	// ControlPlaneEndpoint is the control plane's virtual IP or FQDN.
	ControlPlaneEndpoint string
}

// ProviderVariables are the values of CAPV's component variables that come from the
// configuration: the vCenter credentials its manager starts with (its
// capv-manager-bootstrap-credentials Secret), the password decoded. A nil VSphere has none.
func (vs *VSphere) ProviderVariables() map[string]string {
	if vs == nil {
		return nil
	}
	return map[string]string{VSphereUsername: vs.Username, VSpherePassword: vs.Password}
}

// vsphereRequired are the variables TKG requires of a vSphere cluster.
var vsphereRequired = []string{VSphereServer, VSphereUsername, VSpherePassword, VSphereDatacenter, VSphereResourcePool,
	VSphereFolder, VSphereSSHAuthorizedKey}

// vsphere reads the vSphere variables with TKG's defaults and rules.
func (k *completer) vsphere() {
	var missing []string
	for _, name := range vsphereRequired {
		if _, ok := k.v.Get(name); !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		k.bad("missing configuration variables for the vsphere infrastructure provider: %s", strings.Join(missing, ", "))
	}
	get := func(name string) string { value, _ := k.v.Get(name); return value }
	vs := &VSphere{
		Server: get(VSphereServer), Username: get(VSphereUsername), TLSThumbprint: get(VSphereTLSThumbprint),
		Datacenter: get(VSphereDatacenter), Datastore: get(VSphereDatastore), StoragePolicyID: get(VSphereStoragePolicyID),
		Network: k.value(VSphereNetwork, "VM Network"), ResourcePool: get(VSphereResourcePool), Folder: get(VSphereFolder),
		CloneMode:        k.value(VSphereCloneMode, "fullClone"),
		SSHAuthorizedKey: strings.TrimSpace(get(VSphereSSHAuthorizedKey)),
		Insecure:         k.boolean(VSphereInsecure, k.value(VSphereInsecure, "false")),
	}
	k.c.VSphere = vs
	k.boolean(DeployTKGOnVSphere7, k.value(DeployTKGOnVSphere7, "false"))
	vs.Password = k.secret(VSpherePassword)
	if vs.Datastore == "" && vs.StoragePolicyID == "" {
		k.bad("Neither %s or %s are set. At least one of them needs to be set: %s is the datastore's inventory path (such as /dc0/datastore/ds0), %s a VM storage policy's name",
			VSphereDatastore, VSphereStoragePolicyID, VSphereDatastore, VSphereStoragePolicyID)
	}
	if vs.CloneMode != "fullClone" && vs.CloneMode != "linkedClone" {
		k.bad("invalid %s %q: use fullClone or linkedClone", VSphereCloneMode, vs.CloneMode)
	}
	if vs.Insecure && vs.TLSThumbprint != "" {
		k.note("%s is not used: %s is true, so the vCenter certificate is not verified", VSphereTLSThumbprint, VSphereInsecure)
		vs.TLSThumbprint = ""
	}
	if vs.SSHAuthorizedKey != "" && !authorizedKey(vs.SSHAuthorizedKey) {
		k.bad("invalid %s %q: use a public key in authorized_keys form, as \"ssh-ed25519 AAAAC3Nza… user@host\"", VSphereSSHAuthorizedKey, vs.SSHAuthorizedKey)
	}
	k.controlPlaneEndpoint(vs)
	if p := k.c.Proxy; p != nil && !vs.Insecure && vs.Server != "" && !slices.Contains(p.NoProxy, vs.Server) {
		k.bad("%s %q is not in %s: slipway cannot reach vCenter through the proxy with its certificate verified: add it to %s, or set %s to true",
			VSphereServer, vs.Server, NoProxy, NoProxy, VSphereInsecure)
	}
	k.localNodeRuntime()
}

// controlPlaneEndpoint reads the control plane's virtual IP or FQDN, which kube-vip holds.
func (k *completer) controlPlaneEndpoint(vs *VSphere) {
	endpoint, ok := k.v.Get(VSphereControlPlaneEndpoint)
	if !ok {
		k.bad("'%s' config variable is required for infrastructure provider vsphere: set it to a free IP address (or its FQDN) of the nodes' network, which the control plane holds",
			VSphereControlPlaneEndpoint)
		return
	}
	vs.ControlPlaneEndpoint = endpoint
	ip := net.ParseIP(endpoint)
	switch {
	case ip == nil && len(validation.IsDNS1123Subdomain(endpoint)) > 0:
		k.bad("invalid %s %q: use an IP address or a host name", VSphereControlPlaneEndpoint, endpoint)
	case endpoint == vs.Server || (ip != nil && ip.Equal(net.ParseIP(vs.Server))):
		k.bad("invalid %s %q: the vSphere Control Plane Endpoint should not match the vSphere Server address (%s)", VSphereControlPlaneEndpoint, endpoint, VSphereServer)
	}
}

// sshKeyTypes are the public key types of OpenSSH's authorized_keys.
var sshKeyTypes = []string{"ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
	"sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com", "ssh-dss"}

// authorizedKey says whether key is "TYPE BASE64 [comment]" whose base64 is a key of TYPE (the
// wire format starts with the type's name).
func authorizedKey(key string) bool {
	fields := strings.Fields(key)
	if len(fields) < 2 || !slices.Contains(sshKeyTypes, fields[0]) {
		return false
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil || len(blob) < 4 {
		return false
	}
	n := binary.BigEndian.Uint32(blob)
	return uint64(n) <= uint64(len(blob)-4) && string(blob[4:4+n]) == fields[0]
}

// osImages are the OSes of the vSphere images of slipway's releases (their OSImages), with
// each one's version; every image is amd64.
var osImages = map[string]string{"ubuntu": "20.04", "photon": "3"}

// operatingSystem reads the OS of the nodes' VM template: ubuntu 20.04 amd64 unless told, as
// TKG chooses on vSphere.
func (k *completer) operatingSystem() {
	c := k.c
	c.OSName = k.value(OSName, "ubuntu")
	version, ok := osImages[c.OSName]
	if !ok {
		k.bad("invalid %s %q: use ubuntu or photon, the OSes of the releases' vSphere images", OSName, c.OSName)
	}
	c.OSVersion = k.value(OSVersion, version)
	if ok && c.OSVersion != version {
		k.bad("invalid %s %q for %s %s: use %s, the version of the releases' %s images", OSVersion, c.OSVersion, OSName, c.OSName, version, c.OSName)
	}
	c.OSArch = k.value(OSArch, "amd64")
	if c.OSArch != "amd64" {
		k.bad("invalid %s %q: use amd64, the architecture of the releases' vSphere images", OSArch, c.OSArch)
	}
}

// OSImageSelector checks the OS TKG's upgrade flags ask for (--os-name, --os-version,
// --os-arch; an empty version or architecture is the OS's) and returns the selector of its
// vSphere images, as the run.tanzu.vmware.com/resolve-os-image annotation takes it.
func OSImageSelector(name, version, arch string) (string, error) {
	want, ok := osImages[name]
	if !ok {
		return "", fmt.Errorf("invalid --os-name %q: use ubuntu or photon, the OSes of the releases' vSphere images", name)
	}
	if version == "" {
		version = want
	}
	if version != want {
		return "", fmt.Errorf("invalid --os-version %q for --os-name %s: use %s, the version of the releases' %s images", version, name, want, name)
	}
	if arch == "" {
		arch = "amd64"
	}
	if arch != "amd64" {
		return "", fmt.Errorf("invalid --os-arch %q: use amd64, the architecture of the releases' vSphere images", arch)
	}
	return "image-type=ova,os-name=" + name, nil
}

// apiServerPort reads the API server endpoint's port.
func (k *completer) apiServerPort() {
	n, err := ReadAPIServerPort(k.v)
	if err != nil {
		k.bad("%v", err)
	}
	k.c.APIServerPort = n
}

// ReadAPIServerPort reads CLUSTER_API_SERVER_PORT, the API server endpoint's port: 0 when it is
// not set.
func ReadAPIServerPort(v *Variables) (int, error) {
	value, ok := v.Get(ClusterAPIServerPort)
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 || n > 65535 {
		return n, fmt.Errorf("invalid %s %q: use a port number from 1 to 65535", ClusterAPIServerPort, value)
	}
	return n, nil
}

// local notes what the local provider does not use: its nodes are made of this host's namespaces. What
// it does not use is still checked: an ill-formed value is refused whatever the provider.
func (k *completer) local() {
	k.sizeNames()
	if _, ok := k.v.Get(OSName); ok {
		k.operatingSystem()
	} else if set := k.set(OSVersion, OSArch); len(set) > 0 {
		k.operatingSystem()
	}
	if value, ok := k.v.Get(ClusterAPIServerPort); ok {
		if n, err := strconv.Atoi(value); err != nil || n < 1 || n > 65535 {
			k.bad("invalid %s %q: use a port number from 1 to 65535", ClusterAPIServerPort, value)
		}
	}
	for _, name := range []string{VSphereInsecure, DeployTKGOnVSphere7} {
		if value, ok := k.v.Get(name); ok {
			k.boolean(name, value)
		}
	}
	k.localNodeRuntime()
	const processes = "its nodes are made of this host's namespaces"
	k.unused(processes, Size, ControlPlaneSize, WorkerSize, VSphereNumCPUs, VSphereMemMiB, VSphereDiskGiB,
		VSphereControlPlaneNumCPUs, VSphereControlPlaneMemMiB, VSphereControlPlaneDiskGiB,
		VSphereWorkerNumCPUs, VSphereWorkerMemMiB, VSphereWorkerDiskGiB, OSName, OSVersion, OSArch)
	k.unused("its nodes are made of this host's namespaces, not vSphere VMs", VSphereServer, VSphereUsername, VSpherePassword,
		VSphereDatacenter, VSphereDatastore, VSphereStoragePolicyID, VSphereNetwork, VSphereResourcePool, VSphereFolder,
		VSphereSSHAuthorizedKey, VSphereTLSThumbprint, VSphereInsecure, VSphereCloneMode, VSphereControlPlaneEndpoint, DeployTKGOnVSphere7)
	k.unused("its API servers listen on port 6443 of their nodes and load balancer, each with its own address on the bridge", ClusterAPIServerPort)
	k.unused("its nodes take this host's time, name servers and trust store, and their addresses on slipway's bridge", NTPServers,
		ControlPlaneNodeNameservers, WorkerNodeNameservers, NodeIPAMIPPoolName, ProxyCACert, NodeSystemWideProxy)
	k.unused("its nodes take this host's trust store (slipway's own reads of the registry, the CLI's, kapp-controller's and the TKR source's, use them)",
		CustomImageRepositoryCACertificate, CustomImageRepositorySkipTLSVerify)
	k.unused("its ClusterClass has no audit logging variable", EnableAuditLogging)
	if strings.Contains(k.c.IPFamily, ",") {
		k.note("%s %s is set on the Cluster's networks, but the local runtime's nodes have IPv4 addresses only", IPFamily, k.c.IPFamily)
	}
	if k.c.Proxy != nil {
		k.note("%s and %s are set on the Cluster (variable proxy) but not applied by the local infrastructure provider: its nodes reach nothing off this host",
			HTTPProxy, HTTPSProxy)
	}
}

// localNodeRuntime reads LOCAL_NODE_RUNTIME, which chose between real nodes and the node agent's
// before the agent retired: "real", what every node is now, changes nothing; any other value is
// refused, so that a file written for the agent is not taken for what it no longer makes.
func (k *completer) localNodeRuntime() {
	switch value, ok := k.v.Get(LocalNodeRuntime); {
	case !ok:
	case value == "real":
		k.note("%s is no longer read: every node of the local runtime is real", LocalNodeRuntime)
	default:
		k.bad("invalid %s %q: the node agent is retired and every node of the local runtime is real: remove %s", LocalNodeRuntime, value, LocalNodeRuntime)
	}
}

// ReadVSphere reads where and as whom to reach vCenter, its inventory names and, when set, the
// control-plane endpoint, for commands that act on vCenter without a cluster (OVA import, a
// vSphere bootstrap cluster): VSPHERE_SERVER, VSPHERE_USERNAME and VSPHERE_PASSWORD are
// required.
func ReadVSphere(v *Variables) (*VSphere, error) {
	get := func(name string) string { value, _ := v.Get(name); return value }
	var missing []string
	for _, name := range []string{VSphereServer, VSphereUsername, VSpherePassword} {
		if get(name) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing configuration variables for vCenter: %s: set them in the configuration file or the environment", strings.Join(missing, ", "))
	}
	password, err := decoded(get(VSpherePassword))
	if err != nil {
		return nil, fmt.Errorf("invalid %s <encoded:…>: %w: write the password as it is, or base64-encoded as <encoded:BASE64>", VSpherePassword, err)
	}
	insecure := get(VSphereInsecure)
	if insecure != "" && insecure != "true" && insecure != "false" {
		return nil, fmt.Errorf("invalid %s %q: use true or false", VSphereInsecure, insecure)
	}
	return &VSphere{Server: get(VSphereServer), Username: get(VSphereUsername), Password: password,
		TLSThumbprint: get(VSphereTLSThumbprint), Insecure: insecure == "true",
		Datacenter: get(VSphereDatacenter), Datastore: get(VSphereDatastore), Network: get(VSphereNetwork),
		ResourcePool: get(VSphereResourcePool), Folder: get(VSphereFolder), ControlPlaneEndpoint: get(VSphereControlPlaneEndpoint)}, nil
}
