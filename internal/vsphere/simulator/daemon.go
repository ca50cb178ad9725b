package simulator

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vmware/govmomi/find"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/pki"
	"github.com/slipway-dev/slipway/internal/vsphere/hypervisor"
)

// RunArgs begin the arguments of the simulator's process: `slipway vsphere simulator run`.
var RunArgs = []string{"slipway", "vsphere", "simulator", "run"}

// Daemon is the simulator run as a detached process of slipway, with its state in Dir: its
// address and credentials, its certificate, the datastore's files, its pid file and its log.
type Daemon struct {
	Dir string
	// Executable is the slipway binary to run; empty means this one.
	Executable string
}

// Endpoint is where a running simulator serves and as whom to log in.
type Endpoint struct {
	Address    string `json:"address"`
	Username   string `json:"username"`
	Password   string `json:"password"`
	Thumbprint string `json:"-"`
}

func (d Daemon) endpointPath() string { return filepath.Join(d.Dir, "endpoint.json") }

func (d Daemon) process() proc.Daemon {
	return proc.Daemon{Dir: d.Dir, Name: "simulator", What: "the vCenter simulator", RunArgs: RunArgs, Executable: d.Executable}
}

// LogPath is the simulator process's log.
func (d Daemon) LogPath() string { return d.process().LogPath() }

// Running returns the pid of the simulator's process, when it runs.
func (d Daemon) Running() (int, bool) { return d.process().Running() }

// Endpoint reads where the simulator serves (or last served) and its credentials.
func (d Daemon) Endpoint() (Endpoint, error) {
	var e Endpoint
	raw, err := os.ReadFile(d.endpointPath())
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, fmt.Errorf("%s: %w: stop the simulator and delete the file to start afresh", d.endpointPath(), err)
	}
	kp, err := pki.Read(filepath.Join(d.Dir, "vcenter"))
	if err != nil {
		return e, fmt.Errorf("the simulator's certificate: %w", err)
	}
	e.Thumbprint = thumbprint(kp)
	return e, nil
}

// Start starts the simulator on address unless it runs already, and waits until its inventory
// is built. The password is kept from an earlier start. It says whether it started one.
func (d Daemon) Start(ctx context.Context, address string) (bool, error) {
	if _, ok := d.Running(); ok {
		return false, nil
	}
	if err := CheckAddress(address); err != nil {
		return false, err
	}
	if err := os.MkdirAll(d.Dir, 0o700); err != nil {
		return false, err
	}
	e, err := d.Endpoint()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	if e.Password == "" {
		e = Endpoint{Username: DefaultUsername, Password: NewPassword()}
	}
	e.Address = address
	raw, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return false, err
	}
	if err := os.WriteFile(d.endpointPath(), raw, 0o600); err != nil {
		return false, err
	}
	return d.process().Start(ctx, []string{"--dir", d.Dir}, 200*time.Millisecond, 30*time.Second, d.ready)
}

// ready says whether the simulator lets its user in and has its datacenter.
func (d Daemon) ready(ctx context.Context) bool {
	e, err := d.Endpoint()
	if err != nil {
		return false
	}
	s := &Server{URL: sdkURL(e.Address), Username: e.Username, Password: e.Password}
	c, err := s.Login(ctx)
	if err != nil {
		return false
	}
	defer func() { _ = c.Logout(context.WithoutCancel(ctx)) }()
	_, err = find.NewFinder(c.Client).Datacenter(ctx, Datacenter)
	return err == nil
}

// Run serves the simulator of d's endpoint until ctx ends.
func (d Daemon) Run(ctx context.Context) error {
	e, err := d.Endpoint()
	if errors.Is(err, os.ErrNotExist) {
		// The certificate is made by the first start.
		raw, rerr := os.ReadFile(d.endpointPath())
		if rerr != nil {
			return fmt.Errorf("%s: %w: start the simulator with `slipway vsphere simulator start`", d.endpointPath(), rerr)
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	s, err := Start(ctx, Options{Address: e.Address, Dir: d.Dir, Username: e.Username, Password: e.Password})
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Printf("vCenter simulator serving %s (thumbprint %s)\n", s.URL, s.Thumbprint)
	h, err := d.hypervisor(ctx, s)
	if err != nil {
		return err
	}
	s.OnPowerOn(h.PowerOn)
	h.Run(ctx)
	// The VMs are gone with the simulator: so are their nodes.
	return h.Shutdown()
}

// hypervisor returns the simulated ESXi that boots the simulator's VMs as nodes of the local
// runtime.
func (d Daemon) hypervisor(ctx context.Context, s *Server) (*hypervisor.Hypervisor, error) {
	c, err := s.Login(ctx)
	if err != nil {
		return nil, err
	}
	store, err := cluster.DefaultStore()
	if err != nil {
		return nil, err
	}
	exe := d.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	return &hypervisor.Hypervisor{Client: c.Client, VCenter: s.URL.Host, Store: store, Executable: exe,
		Log: ctrl.Log.WithName("hypervisor")}, nil
}

// Stop stops the simulator; its inventory and VMs are gone with it. It says whether one was
// running.
func (d Daemon) Stop() (bool, error) {
	// It stops the nodes of its VMs first.
	return d.process().Stop(90 * time.Second)
}

// Variables are the configuration variables that point a cluster at the simulator, in TKG's
// order, the password encoded as TKG writes it.
func (e Endpoint) Variables() [][2]string {
	return [][2]string{
		{"VSPHERE_SERVER", e.Address},
		{"VSPHERE_USERNAME", e.Username},
		{"VSPHERE_PASSWORD", "<encoded:" + base64.StdEncoding.EncodeToString([]byte(e.Password)) + ">"},
		{"VSPHERE_TLS_THUMBPRINT", e.Thumbprint},
		{"VSPHERE_DATACENTER", Datacenter},
		{"VSPHERE_RESOURCE_POOL", ResourcePool},
		{"VSPHERE_DATASTORE", Datastore},
		{"VSPHERE_NETWORK", Network},
		{"VSPHERE_FOLDER", Folder},
	}
}
