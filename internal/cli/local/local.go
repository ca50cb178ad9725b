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
		Short: "Run Kubernetes clusters as processes on this host (the local runtime)",
		Long: "The local runtime builds clusters as kind does, with processes instead of containers: each node runs\n" +
			"the real etcd, kube-apiserver, kube-controller-manager and kube-scheduler (control-plane nodes) and a\n" +
			"node agent that stands in for the kubelet. Pods of slipway components run as processes; pods of any\n" +
			"other image are simulated and annotated local.slipway.dev/simulated=true.",
	}
	cmd.AddCommand(cluster.NewCommand(streams), node.NewCommand(streams), lb.NewCommand(streams), registry.NewCommand(streams),
		nodeservice.NewCommand(streams))
	return cmd
}
