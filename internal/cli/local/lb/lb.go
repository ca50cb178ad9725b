// Package lb holds `slipway local lb run`, the load balancer process of a local cluster with
// several control-plane nodes, or of real nodes; the latter also starts the store's node service
// again when it finds it dead.
package lb

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/lb"
)

// nodeServiceWatch is how often the load balancer of a cluster of real nodes checks that the
// store's node service runs.
const nodeServiceWatch = 2 * time.Second

// NewCommand returns `slipway local lb`.
func NewCommand(_ genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "lb", Short: "Load balancers of local clusters", Hidden: true}
	var dir string
	run := &cobra.Command{
		Use:   "run",
		Short: "Balance a local cluster's endpoint over its control-plane nodes until SIGTERM",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ctrl.SetLogger(zap.New())
			spec, err := localcluster.ReadSpec(localcluster.Dirs{Root: dir})
			if err != nil {
				return err
			}
			if spec.LoadBalancerIP == "" {
				return fmt.Errorf("cluster %s has one control-plane node and no load balancer", spec.Name)
			}
			backends := func() []string {
				// The spec is read again for each health check: the infrastructure provider adds
				// and removes control-plane nodes of a Cluster API cluster while it runs.
				current := spec
				if fresh, err := localcluster.ReadSpec(localcluster.Dirs{Root: dir}); err == nil {
					current = fresh
				}
				var out []string
				for _, n := range current.ControlPlane() {
					out = append(out, net.JoinHostPort(n.IP, fmt.Sprint(localcluster.APIServerPort)))
				}
				return out
			}
			ctx := ctrl.LoggerInto(ctrl.SetupSignalHandler(), ctrl.Log)
			if spec.Real() {
				exe, err := os.Executable()
				if err != nil {
					return err
				}
				go localcluster.WatchNodeService(ctx, localcluster.Dirs{Root: dir}, exe, nodeServiceWatch)
			}
			listen := net.JoinHostPort(spec.LoadBalancerIP, fmt.Sprint(localcluster.APIServerPort))
			return lb.Run(ctx, listen, backends)
		},
	}
	run.Flags().StringVar(&dir, "cluster-dir", "", "state directory of the cluster")
	_ = run.MarkFlagRequired("cluster-dir")
	cmd.AddCommand(run)
	return cmd
}
