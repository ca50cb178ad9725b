// Package node holds `slipway local node boot`, the init process of a node of the local runtime
// (package vm), and `slipway local node kubeadm`, the kubeadm its cloud-init runs.
package node

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/slipway-dev/slipway/internal/local/vm"
)

// NewCommand returns `slipway local node`.
func NewCommand(_ genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "node", Short: "The init process and kubeadm of local clusters' nodes", Hidden: true}
	cmd.AddCommand(newBootCommand(), newKubeadmCommand())
	return cmd
}

// newBootCommand returns `slipway local node boot`, which vm.Start runs in a node's namespaces.
func newBootCommand() *cobra.Command {
	var dir string
	boot := &cobra.Command{
		Use:   "boot",
		Short: "Run a node's init process: containerd, the kubelet and its first boot's cloud-init (started by the local runtime in the node's namespaces)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ctrl.SetLogger(zap.New())
			ctx := ctrl.SetupSignalHandler()
			return vm.Boot(ctrl.LoggerInto(ctx, ctrl.Log), dir)
		},
	}
	boot.Flags().StringVar(&dir, "dir", "", "state directory of the node")
	_ = boot.MarkFlagRequired("dir")
	return boot
}

// newKubeadmCommand returns `slipway local node kubeadm`, the kubeadm a node's cloud-init runs
// (vm.Kubeadm).
func newKubeadmCommand() *cobra.Command {
	var binDir string
	kubeadm := &cobra.Command{
		Use:   "kubeadm [--bin-dir DIR] -- ARGS",
		Short: "Run the node's kubeadm as a node of namespaces needs it (run by the node's cloud-init)",
		RunE: func(_ *cobra.Command, args []string) error {
			return vm.Kubeadm(binDir, args)
		},
	}
	kubeadm.Flags().StringVar(&binDir, "bin-dir", "", "directory of the node's kubeadm")
	_ = kubeadm.MarkFlagRequired("bin-dir")
	return kubeadm
}
