package cluster

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
)

func newDeleteCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a local cluster: stop its processes and remove its state and kubeconfig context",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			store, err := localcluster.DefaultStore()
			if err != nil {
				return err
			}
			if _, err := store.Dirs(args[0]); err != nil {
				return err
			}
			if kubeconfig == "" {
				kubeconfig = localcluster.DefaultKubeconfigPath()
			}
			fmt.Fprintf(streams.Out, "Deleting cluster %q ...\n", args[0])
			if err := store.Delete(args[0], kubeconfig); err != nil {
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "Deleted nodes and state of cluster %q\n", args[0])
			return err
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig to remove the cluster's context from (default $KUBECONFIG or ~/.kube/config)")
	return cmd
}
