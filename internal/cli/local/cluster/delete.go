package cluster

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/kubeconfig"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
)

func newDeleteCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var (
		kubeconfigPath string
		force          bool
	)
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
			// A cluster Cluster API made is deleted through its Cluster: deleting its processes
			// and state underneath would leave the Cluster broken for good.
			if spec, err := store.Get(args[0]); err == nil && spec.Owner != nil && !force {
				way := fmt.Sprintf("`slipway cluster delete %s -n %s` on management cluster %s", spec.Owner.Name, spec.Owner.Namespace, spec.Owner.ManagementCluster)
				if spec.Owner.VCenter != "" {
					way = fmt.Sprintf("`slipway cluster delete %s` on its management cluster, which destroys its VMs on the vCenter simulator at %s", spec.Owner.Name, spec.Owner.VCenter)
				}
				if spec.Owner.ManagementCluster == spec.Name {
					way = fmt.Sprintf("`slipway management-cluster delete %s`", spec.Name)
				}
				return fmt.Errorf("local cluster %q belongs to Cluster %s/%s: delete it with %s; --force deletes the local cluster anyway and leaves that Cluster without its machines",
					args[0], spec.Owner.Namespace, spec.Owner.Name, way)
			}
			if kubeconfigPath == "" {
				kubeconfigPath = kubeconfig.DefaultPath()
			}
			fmt.Fprintf(streams.Out, "Deleting cluster %q ...\n", args[0])
			if err := store.Delete(args[0], kubeconfigPath); err != nil {
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "Deleted nodes and state of cluster %q\n", args[0])
			return err
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "delete a cluster that a Cluster API Cluster owns, underneath it")
	cmd.Flags().StringVar(&kubeconfigPath, "kubeconfig", "", "kubeconfig to remove the cluster's context from (default $KUBECONFIG or ~/.kube/config)")
	return cmd
}
