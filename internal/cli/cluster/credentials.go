package cluster

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/client/cluster"
)

// newCredentials is `cluster credentials update NAME`: new vSphere credentials for a workload
// cluster, as TKG's.
func newCredentials(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	var username, password string
	cmd := &cobra.Command{Use: "credentials", Short: "Update the infrastructure credentials of a workload cluster"}
	update := &cobra.Command{
		Use:   "update CLUSTER_NAME --vsphere-user USER --vsphere-password PASSWORD",
		Short: "Update the vSphere credentials of a workload cluster, checked against its vCenter first",
		Long: `Update the vSphere credentials of a workload cluster: they are checked against its vCenter, then
written to the cluster's identity Secret, from which CAPV reconciles it; the vSphere CPI and CSI
on the cluster follow.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := t.client()
			if err != nil {
				return err
			}
			p := progressOf(streams)
			p.Infof("Updating credentials for workload cluster %q", args[0])
			if err := cluster.UpdateVSphereCredentials(cmd.Context(), c, client.ObjectKey{Namespace: t.namespace, Name: args[0]},
				cluster.Credentials{Username: username, Password: password}, p); err != nil {
				return err
			}
			p.Infof("Updating credentials for workload cluster successful!")
			return nil
		},
	}
	update.Flags().StringVarP(&t.namespace, "namespace", "n", "default", "the namespace of the cluster")
	update.Flags().StringVar(&username, "vsphere-user", "", "the vCenter user (required)")
	update.Flags().StringVar(&password, "vsphere-password", "", "the vCenter user's password (required)")
	cmd.AddCommand(update)
	return cmd
}
