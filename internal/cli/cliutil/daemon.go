package cliutil

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Daemon is a process slipway runs in the background with its state in slipway's home: the
// local registry, the vCenter simulator.
type Daemon interface {
	// Running returns the pid of its process, when it runs.
	Running() (int, bool)
	// Start starts it on address unless it runs, and waits until it answers; it says whether
	// it started one.
	Start(ctx context.Context, address string) (bool, error)
	// Stop stops it and says whether it ran.
	Stop() (bool, error)
}

// DaemonVerbs describe the start and stop verbs of a background process, which every such
// process has in the same shape: start is a no-op that says so when it runs already, stop says
// so when it does not run.
type DaemonVerbs[D Daemon] struct {
	// What names the process at the start of a sentence: "The registry".
	What string
	// Open returns the process, its state in slipway's home.
	Open func() (D, error)
	// StartShort and StopShort are the verbs' help lines.
	StartShort, StopShort string
	// DefaultAddress is where start serves unless --address says otherwise; AddressUsage is
	// the flag's help.
	DefaultAddress, AddressUsage string
	// Serving prints where the running process serves and how it is used, after a start or
	// when it already ran.
	Serving func(out io.Writer, d D) error
}

// Commands returns the start and stop verbs.
func (v DaemonVerbs[D]) Commands(streams genericiooptions.IOStreams) (start, stop *cobra.Command) {
	var address string
	start = &cobra.Command{
		Use:   "start",
		Short: v.StartShort,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := v.Open()
			if err != nil {
				return err
			}
			if pid, ok := d.Running(); ok {
				if _, err := fmt.Fprintf(streams.Out, "%s already runs (pid %d)\n", v.What, pid); err != nil {
					return err
				}
			} else if _, err := d.Start(cmd.Context(), address); err != nil {
				return err
			}
			return v.Serving(streams.Out, d)
		},
	}
	start.Flags().StringVar(&address, "address", v.DefaultAddress, v.AddressUsage)

	stop = &cobra.Command{
		Use:   "stop",
		Short: v.StopShort,
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			d, err := v.Open()
			if err != nil {
				return err
			}
			stopped, err := d.Stop()
			if err == nil && !stopped {
				_, err = fmt.Fprintf(streams.Out, "%s does not run\n", v.What)
			}
			return err
		},
	}
	return start, stop
}
