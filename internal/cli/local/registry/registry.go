// Package registry holds `slipway local registry`: the OCI registry of the embedded default,
// a detached process on loopback that package bundles are pushed to and fetched from.
package registry

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	"github.com/slipway-dev/slipway/internal/local/registry"
	"github.com/slipway-dev/slipway/internal/statedir"
)

// daemon is the registry's process, with its state in slipway's home.
func daemon() (registry.Daemon, error) {
	home, err := statedir.Path()
	if err != nil {
		return registry.Daemon{}, err
	}
	return registry.Daemon{Dir: filepath.Join(home, "registry")}, nil
}

// NewCommand returns `slipway local registry`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "registry", Short: "Run the local OCI registry that package bundles are pushed to"}
	start, stop := cliutil.DaemonVerbs[registry.Daemon]{
		What:           "The registry",
		Open:           daemon,
		StartShort:     "Start the registry in the background (state in the slipway home: pushed bundles survive restarts)",
		StopShort:      "Stop the registry (pushed bundles are kept)",
		DefaultAddress: registry.DefaultAddress,
		AddressUsage:   "loopback address to listen on",
		Serving: func(out io.Writer, d registry.Daemon) error {
			address, ok := d.Address()
			if !ok {
				return fmt.Errorf("the registry exited after it started: its log is %s", d.LogPath())
			}
			_, err := fmt.Fprintf(out, "Registry listening on %s (push bundles to %s/packages/NAME:VERSION)\n", address, address)
			return err
		},
	}.Commands(streams)

	var address, dir string
	run := &cobra.Command{
		Use:    "run",
		Short:  "Serve the registry in the foreground until SIGTERM",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ctrl.SetLogger(zap.New())
			return registry.Serve(ctrl.SetupSignalHandler(), address, dir)
		},
	}
	run.Flags().StringVar(&address, "address", registry.DefaultAddress, "loopback address to listen on")
	run.Flags().StringVar(&dir, "dir", "", "directory of blobs and the manifest journal")
	_ = run.MarkFlagRequired("dir")
	cmd.AddCommand(start, stop, run)
	return cmd
}
