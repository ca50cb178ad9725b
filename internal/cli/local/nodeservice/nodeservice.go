// Package nodeservice holds `slipway local node-service`, the process that serves a store's
// nodes to a local infrastructure provider running on one of its real nodes, and starts again the
// load balancers of the store's plain clusters.
package nodeservice

import (
	"errors"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/nodeservice"
)

// NewCommand returns `slipway local node-service`.
func NewCommand(_ genericiooptions.IOStreams) *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use:    "node-service",
		Short:  "Serve a store's nodes to the local infrastructure provider on its real nodes, until SIGTERM",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ctrl.SetLogger(zap.New())
			if root == "" {
				return errors.New("--store is empty: give the directory of the local runtime's clusters")
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			ctx := ctrl.LoggerInto(ctrl.SetupSignalHandler(), ctrl.Log.WithName("node-service"))
			return nodeservice.Run(ctx, localcluster.Store{Root: root}, exe)
		},
	}
	cmd.Flags().StringVar(&root, "store", "", "directory of the local runtime's clusters (slipway's home/local)")
	_ = cmd.MarkFlagRequired("store")
	return cmd
}
