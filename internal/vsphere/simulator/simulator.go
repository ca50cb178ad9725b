// Package simulator is slipway's vCenter simulator: govmomi's vcsim served on an address of this
// host with the inventory of seeds/000 (/dc0, its cluster0 with the resource pool rp0, the
// datastore sharedVmfs-0, the network "VM Network" and the VM folder folder0), so that the
// vSphere flows run on a host without a vCenter. What it serves is simulated: no ESXi host or
// VM exists behind it.
package simulator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/slipway-dev/slipway/internal/local/hostnet"
	"github.com/slipway-dev/slipway/internal/local/vm"
	"github.com/slipway-dev/slipway/internal/pki"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"

	// vcsim's vAPI endpoints (sessions, tags, content libraries), which CAPV and the resolver
	// call, and its cluster modules, in which CAPV keeps a control plane's VMs apart.
	_ "github.com/vmware/govmomi/vapi/cluster/simulator"
	_ "github.com/vmware/govmomi/vapi/simulator"
)

// The inventory's paths, as seeds/000 names them.
const (
	Datacenter   = "/dc0"
	Cluster      = "/dc0/host/cluster0"
	ResourcePool = "/dc0/host/cluster0/Resources/rp0"
	Datastore    = "/dc0/datastore/sharedVmfs-0"
	Network      = "/dc0/network/VM Network"
	Folder       = "/dc0/vm/folder0"
)

// DefaultAddress is where the simulator listens unless told: the host's address on the local
// runtime's bridge, where its VMs, which boot as nodes on the bridge, reach it directly.
var DefaultAddress = net.JoinHostPort(hostnet.HostAddress.String(), "8989")

// DefaultUsername is the simulator's user, vCenter's administrator.
const DefaultUsername = "administrator@vsphere.local"

// hosts is how many ESXi hosts cluster0 has.
const hosts = 2

// Version is the vCenter release the simulator reports: 7.0, the seeds' ("vSphere 7.0
// Environment Detected").
var Version = types.AboutInfo{
	Name:                  "VMware vCenter Server",
	FullName:              "VMware vCenter Server 7.0.3 build-20150588 " + vcenter.SimulatorMark,
	Vendor:                "VMware, Inc.",
	Version:               "7.0.3",
	Build:                 "20150588",
	OsType:                "linux-x64",
	ProductLineId:         "vpx",
	ApiType:               "VirtualCenter",
	ApiVersion:            "7.0.3.0",
	LicenseProductName:    "VMware VirtualCenter Server",
	LicenseProductVersion: "7.0",
}

// Options are where the simulator listens, as whom it lets users in, and where it keeps its
// certificate and datastore.
type Options struct {
	// Address is HOST:PORT of this host. The daemon's, whose VMs boot as nodes, is not on
	// loopback (CheckAddress).
	Address string
	// Dir holds the TLS certificate (kept, so that its thumbprint stays the same across
	// restarts) and the datastore's files.
	Dir                string
	Username, Password string
	// WithTanzu serves cluster0 as a cluster with vSphere with Tanzu enabled, as vCenter lists it
	// at vcenter.SupervisorClustersPath.
	WithTanzu bool
}

// Server is a running simulator.
type Server struct {
	model   *simulator.Model
	server  *simulator.Server
	powerOn *powerOn
	// URL is the SDK endpoint, https://ADDRESS/sdk, without credentials.
	URL *url.URL
	// Thumbprint is the SHA-1 thumbprint of the server's certificate, as VSPHERE_TLS_THUMBPRINT
	// takes it.
	Thumbprint         string
	Username, Password string
}

// CheckAddress says what is wrong with an address for a simulator whose VMs boot as nodes on the
// local runtime's bridge, which reach a vCenter there directly and any other address of this
// host through it (their egress), but not the host's loopback.
func CheckAddress(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("address %q: %w: use HOST:PORT, such as %s", address, err, DefaultAddress)
	}
	switch ip := net.ParseIP(host); {
	case ip == nil || ip.To4() == nil:
		return fmt.Errorf("address %q: the host must be an IPv4 address of this host, such as %s", address, DefaultAddress)
	case ip.IsLoopback() || ip.IsUnspecified():
		return fmt.Errorf("address %q is on loopback, where the pods of the simulator's VMs, nodes on the local runtime's bridge, cannot reach it: use %s (the default) or another address of this host",
			address, DefaultAddress)
	}
	return nil
}

// Start serves the simulator on o.Address and builds its inventory.
func Start(ctx context.Context, o Options) (*Server, error) {
	host, _, err := net.SplitHostPort(o.Address)
	if err != nil {
		return nil, fmt.Errorf("address %q: %w: use HOST:PORT on loopback, such as %s", o.Address, err, DefaultAddress)
	}
	if host == hostnet.HostAddress.String() {
		if err := vm.EnsureBridge(); err != nil {
			return nil, err
		}
	}
	// vcsim panics when it cannot listen: find out first.
	l, err := net.Listen("tcp", o.Address)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", o.Address, err)
	}
	_ = l.Close()
	cert, err := certificate(o.Dir, host)
	if err != nil {
		return nil, err
	}

	model := simulator.VPX()
	// An empty model: the inventory is built below with the seeds' names.
	model.Datacenter, model.Cluster, model.ClusterHost, model.Host, model.Pool = 0, 0, 0, 0, 0
	model.Datastore, model.Machine, model.Portgroup, model.Folder = 0, 0, 0, 0
	model.Autostart = false
	model.ServiceContent.About = Version
	if err := model.Create(); err != nil {
		return nil, fmt.Errorf("vcsim: %w", err)
	}
	clones := newCloneConfig()
	model.Map().Handler = clones.noteClone
	model.Map().AddHandler(clones)
	powerOn := &powerOn{}
	model.Map().AddHandler(powerOn)
	model.Service.Listen = &url.URL{Host: o.Address, User: url.UserPassword(o.Username, o.Password)}
	model.Service.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	model.Service.RegisterEndpoints = true
	server := model.Service.NewServer()
	s := &Server{
		model: model, server: server, powerOn: powerOn,
		URL:      sdkURL(o.Address),
		Username: o.Username, Password: o.Password,
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Thumbprint = soap.ThumbprintSHA1(leaf)
	if err := s.buildInventory(ctx, filepath.Join(o.Dir, "datastore")); err != nil {
		s.Close()
		return nil, fmt.Errorf("building the inventory: %w", err)
	}
	if o.WithTanzu {
		// The list vCenter's namespace management gives: one summary per enabled cluster.
		cluster0 := model.Map().Any("ClusterComputeResource").Reference().Value
		model.Service.Handle(vcenter.SupervisorClustersPath, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode([]map[string]string{{"cluster": cluster0, "cluster_name": filepath.Base(Cluster)}})
		}))
	}
	return s, nil
}

// Close stops serving.
func (s *Server) Close() {
	s.server.Close()
	s.model.Remove()
}

// Login returns a client logged in to the simulator.
func (s *Server) Login(ctx context.Context) (*govmomi.Client, error) {
	u := *s.URL
	u.User = url.UserPassword(s.Username, s.Password)
	c, err := govmomi.NewClient(ctx, &u, true)
	if err != nil {
		return nil, fmt.Errorf("logging in to the simulator at %s: %w", s.URL, err)
	}
	return c, nil
}

// buildInventory makes the seeds' datacenter, cluster with its hosts, resource pool, datastore
// shared by the hosts and VM folder.
func (s *Server) buildInventory(ctx context.Context, datastoreDir string) error {
	c, err := s.Login(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = c.Logout(context.WithoutCancel(ctx)) }()
	dc, err := object.NewRootFolder(c.Client).CreateDatacenter(ctx, filepath.Base(Datacenter))
	if err != nil {
		return err
	}
	folders, err := dc.Folders(ctx)
	if err != nil {
		return err
	}
	cluster, err := folders.HostFolder.CreateCluster(ctx, filepath.Base(Cluster), types.ClusterConfigSpecEx{})
	if err != nil {
		return err
	}
	var members []*object.HostSystem
	for i := range hosts {
		task, err := cluster.AddHost(ctx, types.HostConnectSpec{HostName: fmt.Sprintf("esxi-%d.dc0.local", i)}, true, nil, nil)
		if err != nil {
			return err
		}
		info, err := task.WaitForResult(ctx, nil)
		if err != nil {
			return fmt.Errorf("adding host %d: %w", i, err)
		}
		members = append(members, object.NewHostSystem(c.Client, info.Result.(types.ManagedObjectReference)))
	}
	root, err := cluster.ResourcePool(ctx)
	if err != nil {
		return err
	}
	if _, err := root.Create(ctx, filepath.Base(ResourcePool), types.DefaultResourceConfigSpec()); err != nil {
		return err
	}
	if _, err := folders.VmFolder.CreateFolder(ctx, filepath.Base(Folder)); err != nil {
		return err
	}
	// The inventory is new: files an earlier run left on the datastore belong to no VM, and
	// would refuse an import of the same template (FileAlreadyExists).
	if err := os.RemoveAll(datastoreDir); err != nil {
		return err
	}
	if err := os.MkdirAll(datastoreDir, 0o700); err != nil {
		return err
	}
	for _, h := range members {
		dss, err := h.ConfigManager().DatastoreSystem(ctx)
		if err != nil {
			return err
		}
		if _, err := dss.CreateLocalDatastore(ctx, filepath.Base(Datastore), datastoreDir); err != nil {
			return fmt.Errorf("datastore %s on %s: %w", Datastore, h.Name(), err)
		}
	}
	return nil
}

// certificate returns the server's certificate for host, made on first use and kept in dir.
func certificate(dir, host string) (tls.Certificate, error) {
	base := filepath.Join(dir, "vcenter")
	if kp, err := pki.Read(base); err == nil && time.Until(kp.Cert.NotAfter) > 24*time.Hour && kp.Cert.VerifyHostname(host) == nil {
		return tlsCertificate(kp)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return tls.Certificate{}, fmt.Errorf("the simulator's certificate %s.crt: %w: delete it to make a new one", base, err)
	}
	kp, err := pki.SelfSign(pki.CertSpec{
		CommonName: host, IPs: []net.IP{net.ParseIP(host)},
		Usages: pki.ServerUsage,
	}, false, 10*365*24*time.Hour)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tls.Certificate{}, err
	}
	if err := kp.Write(base); err != nil {
		return tls.Certificate{}, err
	}
	return tlsCertificate(kp)
}

// sdkURL is the SDK endpoint of a vCenter at address.
func sdkURL(address string) *url.URL { return &url.URL{Scheme: "https", Host: address, Path: "/sdk"} }

// thumbprint is the SHA-1 thumbprint of the certificate, as VSPHERE_TLS_THUMBPRINT takes it.
func thumbprint(kp *pki.KeyPair) string { return soap.ThumbprintSHA1(kp.Cert) }

func tlsCertificate(kp *pki.KeyPair) (tls.Certificate, error) {
	key, err := kp.KeyPEM()
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(kp.CertPEM(), key)
}

// NewPassword returns a password for a new simulator.
func NewPassword() string { return rand.String(16) }
