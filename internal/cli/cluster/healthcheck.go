package cluster

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	"github.com/slipway-dev/slipway/internal/client/cluster"
)

// newMachineHealthCheck is `cluster machinehealthcheck node|control-plane get|set|delete`, as
// TKG 2.x's, on the health checks of a ClusterClass cluster's topology.
func newMachineHealthCheck(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "machinehealthcheck",
		Aliases: []string{"mhc"},
		Short:   "Get, set, or delete the MachineHealthChecks of a cluster's nodes or control plane",
		Long: `Get, set, or delete the MachineHealthChecks of a cluster's nodes or control plane.

A ClusterClass cluster's MachineHealthChecks are made by Cluster API from the health checks of its
topology (the control plane's, and each node pool's): set and delete change those, so a change
lasts, and Cluster API makes, changes or deletes the MachineHealthChecks.`,
	}
	for _, target := range []cluster.HealthCheckTarget{cluster.Nodes, cluster.ControlPlane} {
		what := map[cluster.HealthCheckTarget]string{cluster.Nodes: "the nodes (the node pools' machines)", cluster.ControlPlane: "the control plane"}[target]
		sub := &cobra.Command{Use: string(target), Short: "MachineHealthCheck operations for " + what + " of a cluster"}
		sub.AddCommand(newMHCGet(t, streams, target, what), newMHCSet(t, streams, target, what), newMHCDelete(t, streams, target, what))
		cmd.AddCommand(sub)
	}
	return cmd
}

func newMHCGet(t *target, streams genericiooptions.IOStreams, target cluster.HealthCheckTarget, what string) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "get CLUSTER_NAME",
		Short: "Get the MachineHealthChecks of " + what + " of a cluster, as JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := t.client()
			if err != nil {
				return err
			}
			checks, err := cluster.MachineHealthChecks(cmd.Context(), c, client.ObjectKey{Namespace: t.namespace, Name: args[0]}, target, name)
			if err != nil {
				return err
			}
			if checks == nil {
				checks = []cluster.MachineHealthCheck{}
			}
			data, err := json.MarshalIndent(checks, "", "    ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(streams.Out, string(data))
			return err
		},
	}
	cmd.Flags().StringVarP(&name, "mhc-name", "m", "", "name of the MachineHealthCheck object")
	cmd.Flags().StringVarP(&t.namespace, "namespace", "n", "default", "the namespace of the cluster")
	return cmd
}

func newMHCSet(t *target, streams genericiooptions.IOStreams, target cluster.HealthCheckTarget, what string) *cobra.Command {
	var name, matchLabels, conditions, startup string
	cmd := &cobra.Command{
		Use:   "set CLUSTER_NAME",
		Short: "Turn on or change the MachineHealthChecks of " + what + " of a cluster",
		Long: "Turn on or change the MachineHealthChecks of " + what + ` of a cluster.

A check that was off starts from TKG's defaults: a machine whose node is Ready False or Unknown for
5m, or has no node 20m after it started, is remediated. Each --unhealthy-conditions item replaces
the timeout of the condition of its type and status, or is added.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if matchLabels != "" {
				return fmt.Errorf("--match-labels: the MachineHealthChecks of a ClusterClass cluster select the machines Cluster API gives them (a node pool's, or the control plane's): " +
					"choose a node pool's with --mhc-name (listed by `slipway cluster machinehealthcheck node get CLUSTER_NAME`)")
			}
			var change cluster.HealthCheckChange
			if startup != "" {
				d, err := cluster.ParseNodeStartupTimeout(startup)
				if err != nil {
					return err
				}
				change.NodeStartupTimeout = &d
			}
			if conditions != "" {
				parsed, err := cluster.ParseUnhealthyConditions(conditions)
				if err != nil {
					return err
				}
				change.UnhealthyConditions = parsed
			}
			c, err := t.client()
			if err != nil {
				return err
			}
			pools, err := cluster.SetMachineHealthCheck(cmd.Context(), c, client.ObjectKey{Namespace: t.namespace, Name: args[0]}, target, name, change)
			if err != nil {
				return err
			}
			progressOf(streams).Infof("%s", healthCheckChanged(args[0], target, pools, "set"))
			return nil
		},
	}
	cmd.Flags().StringVarP(&name, "mhc-name", "m", "", "name of the MachineHealthCheck object: the node pool it checks (all of them when left out)")
	cmd.Flags().StringVarP(&t.namespace, "namespace", "n", "default", "the namespace of the cluster")
	cmd.Flags().StringVar(&startup, "node-startup-timeout", "", "any machine being created that takes longer than this duration to join the cluster is considered to have failed and is remediated")
	cmd.Flags().StringVar(&matchLabels, "match-labels", "", "refused: a ClusterClass cluster's MachineHealthChecks select their node pool's or control plane's machines")
	cmd.Flags().StringVar(&conditions, "unhealthy-conditions", "", "the conditions that make a node unhealthy, TYPE:STATUS:TIMEOUT separated by commas (types: Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable; statuses: True, False, Unknown)")
	return cmd
}

func newMHCDelete(t *target, streams genericiooptions.IOStreams, target cluster.HealthCheckTarget, what string) *cobra.Command {
	var (
		name string
		yes  bool
	)
	cmd := &cobra.Command{
		Use:   "delete CLUSTER_NAME",
		Short: "Turn off the MachineHealthChecks of " + what + " of a cluster",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !yes {
				which := "the " + string(target) + " MachineHealthChecks"
				if name != "" {
					which = "MachineHealthCheck " + name
				}
				if err := cliutil.Confirm(streams, fmt.Sprintf("Deleting %s of cluster '%s'. Are you sure?", which, args[0])); err != nil {
					return err
				}
			}
			c, err := t.client()
			if err != nil {
				return err
			}
			pools, err := cluster.DeleteMachineHealthCheck(cmd.Context(), c, client.ObjectKey{Namespace: t.namespace, Name: args[0]}, target, name)
			if err != nil {
				return err
			}
			progressOf(streams).Infof("%s", healthCheckChanged(args[0], target, pools, "deleted"))
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking for confirmation")
	cmd.Flags().StringVarP(&name, "mhc-name", "m", "", "name of the MachineHealthCheck object: the node pool it checks (all of them when left out)")
	cmd.Flags().StringVarP(&t.namespace, "namespace", "n", "default", "the namespace of the cluster")
	return cmd
}

// healthCheckChanged says what set or delete changed.
func healthCheckChanged(name string, target cluster.HealthCheckTarget, pools []string, verb string) string {
	if target == cluster.ControlPlane {
		return fmt.Sprintf("The control plane MachineHealthCheck of cluster '%s' is being %s", name, verb)
	}
	return fmt.Sprintf("The MachineHealthChecks of node pools %s of cluster '%s' are being %s", strings.Join(pools, ", "), name, verb)
}
