// Package vsphere holds `slipway vsphere`: the vCenter simulator of the embedded default.
package vsphere

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrl "sigs.k8s.io/controller-runtime"

	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
)

// NewCommand returns `slipway vsphere`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "vsphere", Short: "vSphere: the vCenter simulator of this host"}
	cmd.AddCommand(simulatorCommand(streams))
	return cmd
}

// daemon is the simulator's process, with its state in slipway's home.
func daemon() (simulator.Daemon, error) {
	home, err := localcluster.Home()
	if err != nil {
		return simulator.Daemon{}, err
	}
	return simulator.Daemon{Dir: filepath.Join(home, "vsphere", "simulator")}, nil
}

func simulatorCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simulator",
		Short: "Run a simulated vCenter (govmomi's vcsim) on loopback with the inventory of TKG's examples",
		Long: "The simulator is a vCenter on this host: govmomi's vcsim with the datacenter /dc0, its cluster\n" +
			"cluster0 (resource pool rp0), the datastore sharedVmfs-0, the network \"VM Network\" and the VM\n" +
			"folder folder0. It runs in the background until stopped; its inventory lives in its memory.",
	}
	var address string
	start := &cobra.Command{
		Use:   "start",
		Short: "Start the simulator in the background and print the configuration variables that point at it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := daemon()
			if err != nil {
				return err
			}
			if pid, ok := d.Running(); ok {
				fmt.Fprintf(streams.Out, "The vCenter simulator already runs (pid %d)\n", pid)
				return status(streams.Out, d)
			}
			if _, err := d.Start(cmd.Context(), address); err != nil {
				return err
			}
			return status(streams.Out, d)
		},
	}
	start.Flags().StringVar(&address, "address", simulator.DefaultAddress, "loopback HOST:PORT to serve on")

	stop := &cobra.Command{
		Use:   "stop",
		Short: "Stop the simulator (its inventory and VMs are lost; its certificate and password are kept)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			d, err := daemon()
			if err != nil {
				return err
			}
			stopped, err := d.Stop()
			if err == nil && !stopped {
				_, err = fmt.Fprintln(streams.Out, "The vCenter simulator does not run")
			}
			return err
		},
	}

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
	return nil
}
