package cluster

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"

	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
)

func newKubeconfigCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "kubeconfig NAME",
		Short: "Print the administrator kubeconfig of a local cluster",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			store, err := localcluster.DefaultStore()
			if err != nil {
				return err
			}
			cfg, err := store.Kubeconfig(args[0])
			if err != nil {
				return err
			}
			data, err := clientcmd.Write(*cfg)
			if err != nil {
				return err
			}
			_, err = streams.Out.Write(data)
			return err
		},
	}
}
