// Package prerequisites checks a vSphere environment as TKG does before a cluster is created:
// the vCenter is reachable and its certificate is the one configured, the credentials log in,
// its version is supported, every inventory name exists (and is set to its full path), the
// control-plane endpoint is free and a VM template of the release is there. Nothing is created.
package prerequisites

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// The configuration variables the checks name.
const (
	varServer       = "VSPHERE_SERVER"
	varUsername     = "VSPHERE_USERNAME"
	varPassword     = "VSPHERE_PASSWORD"
	varThumbprint   = "VSPHERE_TLS_THUMBPRINT"
	varInsecure     = "VSPHERE_INSECURE"
	varDatacenter   = "VSPHERE_DATACENTER"
	varNetwork      = "VSPHERE_NETWORK"
	varResourcePool = "VSPHERE_RESOURCE_POOL"
	varDatastore    = "VSPHERE_DATASTORE"
	varFolder       = "VSPHERE_FOLDER"
	varEndpoint     = "VSPHERE_CONTROL_PLANE_ENDPOINT"
)

// Environment is what a cluster's configuration says of its vSphere.
type Environment struct {
	Server, Username, Password string
	// Thumbprint is VSPHERE_TLS_THUMBPRINT; Insecure is VSPHERE_INSECURE.
	Thumbprint string
	Insecure   bool
	// Datacenter, Network, ResourcePool, Datastore and Folder are inventory names or paths;
	// Datastore may be empty when a storage policy is set.
	Datacenter, Network, ResourcePool, Datastore, Folder string
	ControlPlaneEndpoint                                 string
	// ManagementCluster is true for management-cluster create: TKG then describes a vSphere 7
	// environment and only warns of an endpoint in use.
	ManagementCluster bool
	// UsedEndpoints are the control-plane endpoints of the clusters a management cluster has,
	// to the cluster's name.
	UsedEndpoints map[string]string
	// Release and Images are the Kubernetes release and the node OVAs it may run on: one of
	// them must be a template. No images skips the check.
	Release string
	Images  []Image
	// AcceptThumbprint is asked, where TKG prompts, whether to go on with the thumbprint the
	// vCenter's certificate has when VSPHERE_TLS_THUMBPRINT (configured) is unset or differs;
	// nil, or false, refuses with the thumbprint in the message.
	AcceptThumbprint func(host, thumbprint, configured string) bool
}

// Image is a node OVA a release runs on, as its OSImages name it.
type Image struct {
	OVAVersion string
	OS         vcenter.OS
}

// Resolved is what the checks found: each inventory variable's full path and the vCenter's
// certificate thumbprint.
type Resolved struct {
	Paths      map[string]string
	Thumbprint string
}

// minimumVersion is the oldest vSphere TKG supports: 6.7u3.
var minimumVersion = [3]int{6, 7, 3}

// Check runs the checks in TKG's order, printing TKG's lines with infof.
func Check(ctx context.Context, env Environment, infof func(string, ...any)) (*Resolved, error) {
	c, actual, err := Connect(ctx, env)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Logout(context.WithoutCancel(ctx)) }()
	host := c.URL().Host
	r := &Resolved{Paths: map[string]string{}, Thumbprint: actual}
	ep := vcenter.Endpoint{Server: env.Server, Username: env.Username, Password: env.Password}
	if !env.Insecure {
		ep.Thumbprint = actual
	}

	about := c.ServiceContent.About
	version, err := parseVersion(about.Version)
	if err != nil {
		return nil, fmt.Errorf("vSphere %s reports the version %q, which slipway cannot read", host, about.Version)
	}
	if slices.Compare(version[:], minimumVersion[:]) < 0 {
		return nil, fmt.Errorf("the minimum vSphere version supported by Tanzu Kubernetes Grid is vSphere 6.7u3, please upgrade vSphere and try again (%s runs %s)", host, about.FullName)
	}
	if env.ManagementCluster && version[0] == 7 {
		vsphere7(infof, withTanzu(ctx, c, env))
	}

	finder := find.NewFinder(c.Client, true)
	dc, err := finder.Datacenter(ctx, env.Datacenter)
	if err != nil {
		return nil, notFound(varDatacenter, env.Datacenter, "vCenter "+host, existing(func() ([]string, error) {
			l, err := finder.DatacenterList(ctx, "*")
			return sorted(l, common), err
		}))
	}
	finder.SetDatacenter(dc)
	where := "datacenter " + dc.InventoryPath
	r.Paths[varDatacenter] = dc.InventoryPath
	infof("Setting config variable %q to value %q", varDatacenter, dc.InventoryPath)

	lookups := []struct {
		variable, value string
		find            func() (string, error)
		list            func() ([]string, error)
	}{
		{varNetwork, env.Network,
			func() (string, error) { return found(finder.Network(ctx, env.Network))(networkPath) },
			func() ([]string, error) {
				l, err := finder.NetworkList(ctx, "*")
				return sorted(l, networkPath), err
			}},
		{varResourcePool, env.ResourcePool,
			func() (string, error) { return found(finder.ResourcePool(ctx, env.ResourcePool))(common) },
			func() ([]string, error) {
				l, err := finder.ResourcePoolList(ctx, dc.InventoryPath+"/host/...")
				return sorted(l, common), err
			}},
		{varDatastore, env.Datastore,
			func() (string, error) { return found(finder.Datastore(ctx, env.Datastore))(common) },
			func() ([]string, error) { l, err := finder.DatastoreList(ctx, "*"); return sorted(l, common), err }},
		{varFolder, env.Folder,
			func() (string, error) { return found(finder.Folder(ctx, env.Folder))(common) },
			func() ([]string, error) {
				l, err := finder.FolderList(ctx, dc.InventoryPath+"/vm/...")
				return sorted(l, common), err
			}},
	}
	for _, l := range lookups {
		if l.value == "" {
			continue
		}
		path, err := l.find()
		if err != nil {
			return nil, notFound(l.variable, l.value, where, existing(l.list))
		}
		r.Paths[l.variable] = path
		infof("Setting config variable %q to value %q", l.variable, path)
	}

	if env.ControlPlaneEndpoint != "" {
		if vcenter.Simulated(about.FullName) {
			if err := vcenter.CheckSimulatorEndpoint(env.ControlPlaneEndpoint); err != nil {
				return nil, err
			}
		}
		infof("Checking if %s %s is already in use", varEndpoint, env.ControlPlaneEndpoint)
		holder := env.UsedEndpoints[env.ControlPlaneEndpoint]
		if holder == "" {
			if holder, err = vmWithIP(ctx, c.Client, dc, env.ControlPlaneEndpoint); err != nil {
				return nil, err
			}
		}
		if holder != "" {
			if !env.ManagementCluster {
				return nil, fmt.Errorf("control plane endpoint '%s' already in use by %s and cannot be reused: set %s to a free address of the nodes' network",
					env.ControlPlaneEndpoint, holder, varEndpoint)
			}
			infof("WARNING: The control plane endpoint '%s' might already used by other cluster (%s). This might affect the deployment of the cluster", env.ControlPlaneEndpoint, holder)
		}
	}

	if len(env.Images) > 0 {
		if err := template(ctx, ep, dc.InventoryPath, env); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Connect reaches the environment's vCenter, checks its certificate's thumbprint unless
// VSPHERE_INSECURE, and logs in; it returns the client and the thumbprint it saw. Each failure
// names the variable to change.
func Connect(ctx context.Context, env Environment) (*govmomi.Client, string, error) {
	u, err := soap.ParseURL(strings.TrimSpace(env.Server))
	if err != nil || u == nil {
		return nil, "", fmt.Errorf("invalid %s %q: use the vCenter's host name or address, with :PORT when it is not 443", varServer, env.Server)
	}
	actual, err := ServerThumbprint(ctx, u.Host)
	if err != nil {
		return nil, "", fmt.Errorf("cannot reach vSphere %s (%s): %w: check %s and that this host can reach it", u.Host, varServer, err, varServer)
	}
	if !env.Insecure && !strings.EqualFold(env.Thumbprint, actual) && env.AcceptThumbprint != nil && env.AcceptThumbprint(u.Host, actual, env.Thumbprint) {
		env.Thumbprint = actual
	}
	if !env.Insecure {
		switch {
		case env.Thumbprint == "":
			return nil, "", fmt.Errorf("%s is not set: the certificate of vSphere %s has the thumbprint %s: set %s to it once you have checked that it is your vCenter's, or set %s to true",
				varThumbprint, u.Host, actual, varThumbprint, varInsecure)
		case !strings.EqualFold(env.Thumbprint, actual):
			return nil, "", fmt.Errorf("the %s variable does not match the thumbprint of vSphere %s, the actual thumbprint is %s: set %s to it if this is your vCenter, or correct %s",
				varThumbprint, u.Host, actual, varThumbprint, varServer)
		}
	}
	ep := vcenter.Endpoint{Server: env.Server, Username: env.Username, Password: env.Password}
	if !env.Insecure {
		ep.Thumbprint = actual
	}
	c, err := vcenter.Login(ctx, ep)
	if err != nil {
		return nil, "", fmt.Errorf("unable to verify vSphere credentials: %w: check %s and %s", err, varUsername, varPassword)
	}
	return c, actual, nil
}

// Inventory is what a vCenter offers a cluster's configuration, as the installer lists it.
type Inventory struct {
	// Version is the vCenter's name and version (VMware vCenter Server 8.0.2 build-…).
	Version     string   `json:"version"`
	Datacenters []string `json:"datacenters"`
	// Networks, ResourcePools, Datastores and Folders are the datacenter's, when the
	// environment names one that exists.
	Networks      []string `json:"networks,omitempty"`
	ResourcePools []string `json:"resourcePools,omitempty"`
	Datastores    []string `json:"datastores,omitempty"`
	Folders       []string `json:"folders,omitempty"`
	// OSImages are the datacenter's VM templates imported from a node OVA, as TKG's installer
	// offers them for its OS image step.
	OSImages []OSImage `json:"osImages,omitempty"`
}

// OSImage is a VM template of a node OVA: where it is, the Kubernetes version and release it
// was built for, and its distribution as OS_NAME, OS_VERSION and OS_ARCH name it.
type OSImage struct {
	Path       string `json:"path"`
	OVAVersion string `json:"ovaVersion"`
	// Kubernetes is the Kubernetes version of the OVA's release (v1.35.4+vmware.1), read from
	// its VERSION property (v1.35.4+vmware.1-tkg.1-ubuntu-2004); empty when it names none.
	Kubernetes string `json:"kubernetes,omitempty"`
	OSName     string `json:"osName"`
	OSVersion  string `json:"osVersion"`
	OSArch     string `json:"osArch"`
}

// kubernetesOfOVA reads the Kubernetes version at the start of a node OVA's VERSION property.
var kubernetesOfOVA = regexp.MustCompile(`^v\d+\.\d+\.\d+\+vmware\.\d+`)

// Browse connects as Connect does and lists the vCenter's datacenters, and, when the
// environment names a datacenter, what it holds for a cluster, by the paths the checks resolve.
func Browse(ctx context.Context, env Environment) (*Inventory, error) {
	c, _, err := Connect(ctx, env)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Logout(context.WithoutCancel(ctx)) }()
	inv := &Inventory{Version: c.ServiceContent.About.FullName}
	finder := find.NewFinder(c.Client, true)
	dcs, err := finder.DatacenterList(ctx, "*")
	if err != nil {
		return nil, fmt.Errorf("failed to list the datacenters of %s: %w", c.URL().Host, err)
	}
	inv.Datacenters = sorted(dcs, common)
	if env.Datacenter == "" {
		return inv, nil
	}
	dc, err := finder.Datacenter(ctx, env.Datacenter)
	if err != nil {
		return nil, notFound(varDatacenter, env.Datacenter, "vCenter "+c.URL().Host, inv.Datacenters)
	}
	finder.SetDatacenter(dc)
	inv.Networks = existing(func() ([]string, error) { l, err := finder.NetworkList(ctx, "*"); return sorted(l, networkPath), err })
	inv.ResourcePools = existing(func() ([]string, error) {
		l, err := finder.ResourcePoolList(ctx, dc.InventoryPath+"/host/...")
		return sorted(l, common), err
	})
	inv.Datastores = existing(func() ([]string, error) { l, err := finder.DatastoreList(ctx, "*"); return sorted(l, common), err })
	inv.Folders = existing(func() ([]string, error) {
		l, err := finder.FolderList(ctx, dc.InventoryPath+"/vm/...")
		return sorted(l, common), err
	})
	vms, err := vcenter.ListVMsOf(ctx, c.Client, dc.InventoryPath)
	if err != nil {
		return nil, err
	}
	for _, vm := range vms {
		if !vm.IsTemplate {
			continue
		}
		inv.OSImages = append(inv.OSImages, OSImage{Path: vm.Path, OVAVersion: vm.OVAVersion, Kubernetes: kubernetesOfOVA.FindString(vm.OVAVersion),
			OSName: vm.Distro.Name, OSVersion: vm.DistroVersion, OSArch: vm.Distro.Arch})
	}
	slices.SortFunc(inv.OSImages, func(a, b OSImage) int { return strings.Compare(a.Path, b.Path) })
	return inv, nil
}

// vsphere7 prints what TKG says on a vSphere 7, with vSphere with Tanzu enabled or without it
// (seeds/000), and goes on as TKG does when told to deploy a management cluster anyway.
func vsphere7(infof func(string, ...any), tanzu bool) {
	infof("")
	if tanzu {
		infof("vSphere 7.0 with Tanzu Detected.")
		infof("")
		infof("You have connected to a vSphere 7.0 with Tanzu environment that includes an integrated Tanzu Kubernetes Grid Service which")
		infof("turns a vSphere cluster into a platform for running Kubernetes workloads in dedicated resource pools. Configuring Tanzu")
		infof("Kubernetes Grid Service is done through the vSphere HTML5 Client.")
	} else {
		infof("vSphere 7.0 Environment Detected.")
		infof("")
		infof("You have connected to a vSphere 7.0 environment which does not have vSphere with Tanzu enabled. vSphere with Tanzu includes")
		infof("an integrated Tanzu Kubernetes Grid Service which turns a vSphere cluster into a platform for running Kubernetes workloads in dedicated")
		infof("resource pools. Configuring Tanzu Kubernetes Grid Service is done through vSphere HTML5 client.")
	}
	infof("")
	infof("Tanzu Kubernetes Grid Service is the preferred way to consume Tanzu Kubernetes Grid in vSphere 7.0 environments. Alternatively you may")
	infof("deploy a non-integrated Tanzu Kubernetes Grid instance on vSphere 7.0.")
	infof("Deploying TKG management cluster on vSphere 7.0 ...")
}

// withTanzu says whether vSphere with Tanzu is enabled on a cluster of the vCenter, as TKG finds
// out: a vCenter that does not answer the question has it off.
func withTanzu(ctx context.Context, c *govmomi.Client, env Environment) bool {
	rc := rest.NewClient(c.Client)
	if err := rc.Login(ctx, url.UserPassword(env.Username, env.Password)); err != nil {
		return false
	}
	defer func() { _ = rc.Logout(context.WithoutCancel(ctx)) }()
	var clusters []json.RawMessage
	if err := rc.Do(ctx, rc.Resource(vcenter.SupervisorClustersPath).Request(http.MethodGet), &clusters); err != nil {
		return false
	}
	return len(clusters) > 0
}

// ServerThumbprint reads the SHA-1 thumbprint of the certificate host presents.
func ServerThumbprint(ctx context.Context, host string) (string, error) {
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "443")
	}
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second},
		// Only to read the certificate, which is then compared with the configured thumbprint.
		Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec
	conn, err := dialer.DialContext(ctx, "tcp", host)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return "", errors.New("it presented no certificate")
	}
	return soap.ThumbprintSHA1(certs[0]), nil
}

// parseVersion reads "7.0.3" as {7, 0, 3}.
func parseVersion(v string) ([3]int, error) {
	var out [3]int
	parts := strings.SplitN(v, ".", 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return out, err
		}
		out[i] = n
	}
	return out, nil
}

// notFound says that a variable's object does not exist, and what does.
func notFound(variable, value, where string, existing []string) error {
	msg := fmt.Sprintf("invalid %s %q: it is not found in %s", variable, value, where)
	if len(existing) > 0 {
		msg += ": use one of " + strings.Join(existing, ", ")
	}
	return errors.New(msg)
}

// common is the path a finder gave an object.
func common[T interface {
	Reference() types.ManagedObjectReference
}](o T) string {
	switch v := any(o).(type) {
	case *object.Datacenter:
		return v.InventoryPath
	case *object.ResourcePool:
		return v.InventoryPath
	case *object.Datastore:
		return v.InventoryPath
	case *object.Folder:
		return v.InventoryPath
	}
	return ""
}

// found returns the path of what a finder found, or its error.
func found[T any](o T, err error) func(path func(T) string) (string, error) {
	return func(path func(T) string) (string, error) {
		if err != nil {
			return "", err
		}
		return path(o), nil
	}
}

// networkPath is the path a finder gave a network of any kind.
func networkPath(n object.NetworkReference) string {
	switch v := n.(type) {
	case *object.Network:
		return v.InventoryPath
	case *object.DistributedVirtualPortgroup:
		return v.InventoryPath
	case *object.OpaqueNetwork:
		return v.InventoryPath
	}
	return ""
}

// sorted is the objects' paths, sorted.
func sorted[T any](list []T, path func(T) string) []string {
	var out []string
	for _, o := range list {
		if p := path(o); p != "" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// existing lists what exists, or nothing when listing fails.
func existing(list func() ([]string, error)) []string {
	out, err := list()
	if err != nil {
		return nil
	}
	return out
}

// vmWithIP returns the VM of the datacenter whose guest reports ip, if any.
func vmWithIP(ctx context.Context, c *vim25.Client, dc *object.Datacenter, ip string) (string, error) {
	m := view.NewManager(c)
	v, err := m.CreateContainerView(ctx, dc.Reference(), []string{"VirtualMachine"}, true)
	if err != nil {
		return "", err
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	var vms []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "guest.net", "guest.ipAddress"}, &vms); err != nil {
		return "", fmt.Errorf("failed to list the VMs of %s: %w", dc.InventoryPath, err)
	}
	for _, vm := range vms {
		if vm.Guest == nil {
			continue
		}
		if vm.Guest.IpAddress == ip {
			return "VM " + vm.Name, nil
		}
		for _, n := range vm.Guest.Net {
			if slices.Contains(n.IpAddress, ip) {
				return "VM " + vm.Name, nil
			}
		}
	}
	return "", nil
}

// template finds a VM template of one of the release's images, as tkr-vsphere-resolver will.
func template(ctx context.Context, ep vcenter.Endpoint, datacenter string, env Environment) error {
	ep.Datacenter = datacenter
	vms, err := vcenter.ListVMs(ctx, ep)
	if err != nil {
		return err
	}
	var versions []string
	for _, img := range env.Images {
		versions = append(versions, img.OVAVersion)
		for _, vm := range vms {
			if vm.IsTemplate && vm.OVAVersion == img.OVAVersion && vm.Distro == img.OS {
				return nil
			}
		}
	}
	return fmt.Errorf("unable to find VM Template associated with TanzuKubernetesRelease %s. Please upload at least one VM Template from versions [%s] to continue: import its node OVA into %s and mark it a template",
		env.Release, strings.Join(versions, ","), datacenter)
}
