package cluster

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	"github.com/slipway-dev/slipway/internal/client/cluster"
)

// newNodePool is `cluster node-pool list|set|delete`: the machine deployments of a cluster's
// topology.
func newNodePool(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "node-pool", Short: "List, add or change, and delete the node pools (topology machine deployments) of a cluster"}
	cmd.AddCommand(newNodePoolList(t, streams), newNodePoolSet(t, streams), newNodePoolDelete(t, streams))
	return cmd
}

func newNodePoolList(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list CLUSTER_NAME",
		Short: "List the node pools of a cluster",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := t.client()
			if err != nil {
				return err
			}
			pools, err := cluster.NodePools(cmd.Context(), c, client.ObjectKey{Namespace: t.namespace, Name: args[0]})
			if err != nil {
				return err
			}
			var rows [][]string
			for _, p := range pools {
				rows = append(rows, []string{p.Name, p.Namespace, p.Phase, itoa(p.Replicas), itoa(p.Ready), itoa(p.Updated), itoa(p.Unavailable)})
			}
			return cliutil.Print(streams.Out, output, []string{"NAME", "NAMESPACE", "PHASE", "REPLICAS", "READY", "UPDATED", "UNAVAILABLE"}, rows)
		},
	}
	cmd.Flags().StringVarP(&t.namespace, "namespace", "n", "default", "the namespace of the cluster")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: "+cliutil.Formats)
	return cmd
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func newNodePoolSet(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "set CLUSTER_NAME -f FILE",
		Short: "Add a node pool to a cluster, or change one",
		Long: `Add a node pool to a cluster, or change the one of the file's name. The file is TKG's:

  name: np-1                    # required
  replicas: 2                   # a new pool without it has its base's, or 1
  baseMachineDeployment: md-0   # a new pool copies this one, or starts from workerClass
  workerClass: tkg-worker       # a machine deployment class of the cluster's ClusterClass
  az: zone-a                    # the failure domain
  labels: {disk: ssd}           # added to the pool's nodePoolLabels
  taints: [{key: k, value: v, effect: NoSchedule}]   # the pool's nodePoolTaints, if the ClusterClass has it
  tkrResolver: os-name=ubuntu   # selects the pool's OS image`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("--file (-f): %w", err)
			}
			np, err := cluster.ReadNodePool(data)
			if err != nil {
				return err
			}
			c, err := t.client()
			if err != nil {
				return err
			}
			created, err := cluster.SetNodePool(cmd.Context(), c, client.ObjectKey{Namespace: t.namespace, Name: args[0]}, np, cliutil.CheckHost, progressOf(streams))
			if err != nil {
				return err
			}
			verb := "updated"
			if created {
				verb = "created"
			}
			progressOf(streams).Infof("Node pool '%s' of cluster '%s' is being %s", np.Name, args[0], verb)
			return nil
		},
	}
	cmd.Flags().StringVar(&t.namespace, "namespace", "default", "the namespace of the cluster")
	cmd.Flags().StringVarP(&file, "file", "f", "", "the file describing the node pool (required)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func newNodePoolDelete(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "delete CLUSTER_NAME -n POOL",
		Short: "Delete a node pool of a cluster",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := t.client()
			if err != nil {
				return err
			}
			if err := cluster.DeleteNodePool(cmd.Context(), c, client.ObjectKey{Namespace: t.namespace, Name: args[0]}, name); err != nil {
				return err
			}
			progressOf(streams).Infof("Node pool '%s' is being deleted", name)
			return nil
		},
	}
	// As TKG's: -n names the pool here, and the cluster's namespace is --namespace.
	cmd.Flags().StringVarP(&name, "name", "n", "", "the node pool to delete (required)")
	cmd.Flags().StringVar(&t.namespace, "namespace", "default", "the namespace of the cluster")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func newAvailableUpgrades(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "available-upgrades", Aliases: []string{"avup"}, Short: "Get upgrade information for a cluster"}
	get := &cobra.Command{
		Use:   "get CLUSTER_NAME",
		Short: "List the Kubernetes releases a cluster can upgrade to",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := t.client()
			if err != nil {
				return err
			}
			releases, err := cluster.AvailableUpgrades(cmd.Context(), c, client.ObjectKey{Namespace: t.namespace, Name: args[0]})
			if cluster.IsNoUpgrades(err) {
				// TKG says so and succeeds.
				_, err = fmt.Fprintln(streams.Out, err)
				return err
			}
			if err != nil {
				return err
			}
			var rows [][]string
			for _, r := range releases {
				rows = append(rows, []string{r.Name, r.Spec.Version, "True"})
			}
			return cliutil.Table(streams.Out, []string{"NAME", "VERSION", "COMPATIBLE"}, rows)
		},
	}
	get.Flags().StringVarP(&t.namespace, "namespace", "n", "default", "the namespace of the cluster")
	cmd.AddCommand(get)
	return cmd
}
