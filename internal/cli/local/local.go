// Package local holds `slipway local`, the commands of the local runtime.
package local

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli/local/cluster"
	"github.com/slipway-dev/slipway/internal/cli/local/lb"
	"github.com/slipway-dev/slipway/internal/cli/local/node"
	"github.com/slipway-dev/slipway/internal/cli/local/nodeservice"
	"github.com/slipway-dev/slipway/internal/cli/local/registry"
)

// NewCommand returns `slipway local`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Run Kubernetes clusters of nodes made of this host's namespaces (the local runtime)",
		Long: "The local runtime builds clusters as kind does, with namespaces instead of containers: each node has its\n" +
			"own network namespace on the host-only bridge slipway0, mount namespace and cgroups, and runs containerd\n" +
			"and the real kubelet; kubeadm boots it from its cloud-init. Its pods run the images they name, pulled\n" +
			"from the local registry.",
	}
	cmd.AddCommand(cluster.NewCommand(streams), node.NewCommand(streams), lb.NewCommand(streams), registry.NewCommand(streams),
		nodeservice.NewCommand(streams))
	return cmd
}
