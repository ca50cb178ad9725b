// Package vsphere holds `slipway vsphere`: the vCenter simulator of the embedded default.
package vsphere

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	clientvsphere "github.com/slipway-dev/slipway/internal/client/vsphere"
	"github.com/slipway-dev/slipway/internal/local/hostnet"
	"github.com/slipway-dev/slipway/internal/statedir"
	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// NewCommand returns `slipway vsphere`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "vsphere", Short: "vSphere: the vCenter simulator of this host"}
	cmd.AddCommand(simulatorCommand(streams), ovaCommand(streams))
	return cmd
}

func ovaCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "ova", Short: "Kubernetes node OVAs: import them into vCenter as templates, or build them for the simulator"}
	var file, name string
	imp := &cobra.Command{
		Use:   "import OVA",
		Short: "Import a node OVA into vCenter and mark it a template, as before creating clusters of its release",
		Long: "Imports the OVA into the vCenter that the configuration's VSPHERE_* variables name (file, then\n" +
			"environment): into VSPHERE_FOLDER, VSPHERE_RESOURCE_POOL and VSPHERE_DATASTORE of VSPHERE_DATACENTER,\n" +
			"its network on VSPHERE_NETWORK, and marks it a template, which tkr-vsphere-resolver then finds.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := clientvsphere.ImportOVA(cmd.Context(), clientvsphere.ImportOptions{File: file, Environ: os.Environ(), OVA: args[0], Name: name})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "Imported %s as the VM template %s\n", args[0], path)
			return err
		},
	}
	imp.Flags().StringVarP(&file, "file", "f", "", "cluster configuration file with the VSPHERE_* variables")
	imp.Flags().StringVar(&name, "name", "", "the template's name (default: the OVA's)")

	var release, osName, out string
	build := &cobra.Command{
		Use:   "build",
		Short: "Build, for the vCenter simulator, the node OVA of a release: its vApp properties, a blank disk",
		Long: "Writes the OVA that a release's OVA OSImage names, with the vApp properties of TKG's node images\n" +
			"(VERSION, DISTRO_NAME, DISTRO_VERSION, DISTRO_ARCH) and a blank 20 GiB disk, which CAPV clones.\n" +
			"Nothing is on the disk: it is not a bootable image for a real vCenter.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			img, err := clientvsphere.NodeImage(release, osName)
			if err != nil {
				return err
			}
			if out == "" {
				out = strings.ReplaceAll(img.Name, "+", "-") + ".ova"
			}
			f, err := os.Create(out)
			if err != nil {
				return err
			}
			if _, err := clientvsphere.BuildOVA(f, release, osName); err != nil {
				f.Close()
				_ = os.Remove(out)
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "Wrote %s (simulated node image %s, VERSION %s)\n", out, img.Name, img.OVAVersion)
			return err
		},
	}
	build.Flags().StringVar(&release, "kubernetes-release", "", "the release's version, such as v1.35.4+vmware.1-tkg.1")
	build.Flags().StringVar(&osName, "os", "ubuntu-20.04", "the node OS: ubuntu-20.04 or photon-3")
	build.Flags().StringVarP(&out, "output", "o", "", "the OVA file to write (default: NAME.ova here)")
	_ = build.MarkFlagRequired("kubernetes-release")
	cmd.AddCommand(imp, build)
	return cmd
}

// daemon is the simulator's process, with its state in slipway's home.
func daemon() (simulator.Daemon, error) {
	home, err := statedir.Path()
	if err != nil {
		return simulator.Daemon{}, err
	}
	return simulator.Daemon{Dir: filepath.Join(home, "vsphere", "simulator")}, nil
}

func simulatorCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simulator",
		Short: "Run a simulated vCenter (govmomi's vcsim) on this host with the inventory of TKG's examples",
		Long: "The simulator is a vCenter on this host: govmomi's vcsim with the datacenter /dc0, its cluster\n" +
			"cluster0 (resource pool rp0), the datastore sharedVmfs-0, the network \"VM Network\" and the VM\n" +
			"folder folder0. It runs in the background until stopped; its inventory lives in its memory.",
	}
	start, stop := cliutil.DaemonVerbs[simulator.Daemon]{
		What:           "The vCenter simulator",
		Open:           daemon,
		StartShort:     "Start the simulator in the background and print the configuration variables that point at it",
		StopShort:      "Stop the simulator (its inventory and VMs are lost; its certificate and password are kept)",
		DefaultAddress: simulator.DefaultAddress,
		AddressUsage:   "HOST:PORT to serve on: the host's address on the local runtime's bridge, where its VMs reach it, or another address of this host (not loopback), which they reach through it (root)",
		Serving:        status,
	}.Commands(streams)

	statusCmd := &cobra.Command{
		Use:   "status",
		Short: "Say whether the simulator runs, where, and the configuration variables that point at it",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			d, err := daemon()
			if err != nil {
				return err
			}
			if _, ok := d.Running(); !ok {
				_, err := fmt.Fprintln(streams.Out, "The vCenter simulator does not run: start it with `slipway vsphere simulator start`")
				return err
			}
			return status(streams.Out, d)
		},
	}

	run := &cobra.Command{
		Use:    "run",
		Short:  "Serve the simulator in the foreground until SIGTERM",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, _ := cmd.Flags().GetString("dir")
			ctrl.SetLogger(zap.New())
			return simulator.Daemon{Dir: dir}.Run(ctrl.SetupSignalHandler())
		},
	}
	run.Flags().String("dir", "", "the simulator's state directory")
	_ = run.MarkFlagRequired("dir")
	cmd.AddCommand(start, stop, statusCmd, run)
	return cmd
}

// status prints where the running simulator serves and the variables that point at it.
func status(out io.Writer, d simulator.Daemon) error {
	e, err := d.Endpoint()
	if err != nil {
		return err
	}
	pid, _ := d.Running()
	fmt.Fprintf(out, "vCenter simulator (simulated: govmomi's vcsim) serving https://%s/sdk, pid %d, log %s\n", e.Address, pid, d.LogPath())
	fmt.Fprintln(out, "Its configuration variables, for a cluster configuration file:")
	for _, v := range e.Variables() {
		fmt.Fprintf(out, "%s: %q\n", v[0], v[1])
	}
	fmt.Fprintf(out, "# Its VMs boot as nodes of this host. For each cluster its own address of %s, such as\nVSPHERE_CONTROL_PLANE_ENDPOINT: %q\n", hostnet.EndpointBlock, vcenter.SimulatorEndpoint)
	return nil
}
