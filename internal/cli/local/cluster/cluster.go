// Package cluster holds `slipway local cluster`: create, list, delete, kubeconfig and start, as
// kind's create cluster, get clusters, delete cluster and get kubeconfig.
package cluster

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// NewCommand returns `slipway local cluster`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Create, list, start and delete local clusters",
	}
	cmd.AddCommand(
		newCreateCommand(streams),
		newListCommand(streams),
		newDeleteCommand(streams),
		newKubeconfigCommand(streams),
		newStartCommand(streams),
	)
	return cmd
}
