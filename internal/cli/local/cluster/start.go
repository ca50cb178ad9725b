package cluster

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
)

func newStartCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "start NAME",
		Short: "Start the stopped processes of a local cluster, after a host restart or a killed node",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := localcluster.DefaultStore()
			if err != nil {
				return err
			}
			start := time.Now()
			fmt.Fprintf(streams.Out, "Starting cluster %q ...\n", args[0])
			if err := store.Start(cmd.Context(), args[0], "", timeout); err != nil {
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "Cluster %q is Ready after %s\n", args[0], time.Since(start).Round(time.Second))
			return err
		},
	}
	cmd.Flags().DurationVar(&timeout, "wait", 3*time.Minute, "how long to wait for the nodes to be Ready")
	return cmd
}
