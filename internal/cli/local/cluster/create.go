package cluster

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/clusterapi"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/pki"
)

type createFlags struct {
	kubernetesVersion string
	controlPlaneNodes int
	workerNodes       int
	kubeconfig        string
	wait              time.Duration
	retain            bool
	pkiDir            string
	bootstrap         bool
}

func newCreateCommand(streams genericiooptions.IOStreams) *cobra.Command {
	f := &createFlags{}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a local cluster",
		Example: "  slipway local cluster create dev\n" +
			"  slipway local cluster create ha --control-plane-nodes 3 --worker-nodes 2 --kubernetes-version v1.34.3",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := localcluster.DefaultStore()
			if err != nil {
				return err
			}
			var cas *pki.CAs
			if f.pkiDir != "" {
				if cas, err = pki.ReadCAs(f.pkiDir); err != nil {
					return fmt.Errorf("--pki-dir %s: %w: it must hold ca.crt/ca.key, etcd/ca.crt/ca.key, front-proxy-ca.crt/ca.key and sa.key as kubeadm lays them out", f.pkiDir, err)
				}
			}
			err = store.Create(cmd.Context(), localcluster.CreateOptions{
				Name:              args[0],
				KubernetesVersion: f.kubernetesVersion,
				ControlPlaneNodes: f.controlPlaneNodes,
				WorkerNodes:       f.workerNodes,
				Kubeconfig:        f.kubeconfig,
				Wait:              f.wait,
				Retain:            f.retain,
				CAs:               cas,
				Out:               streams.Out,
			})
			if err != nil || !f.bootstrap {
				return err
			}
			// TKG's bootstrap payload: clusterctl init with cert-manager, the core, kubeadm and
			// local providers, run from the local provider repository.
			dirs := store.Dirs(args[0])
			return clusterapi.Init(cmd.Context(), clusterapi.InitOptions{
				Kubeconfig: dirs.Kubeconfig(), WorkDir: dirs.Root, Timeout: 5 * time.Minute,
				Out: streams.Out, Log: clusterapi.ProgressLogger(streams.Out),
			})
		},
	}
	cmd.Flags().StringVar(&f.kubernetesVersion, "kubernetes-version", assets.DefaultKubernetesVersion(), "Kubernetes version of the nodes")
	cmd.Flags().IntVar(&f.controlPlaneNodes, "control-plane-nodes", 1, "number of control-plane nodes; several form one etcd cluster behind a load balancer")
	cmd.Flags().IntVar(&f.workerNodes, "worker-nodes", 0, "number of worker nodes")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig to merge the cluster's context into (default $KUBECONFIG or ~/.kube/config)")
	cmd.Flags().DurationVar(&f.wait, "wait", 2*time.Minute, "how long to wait for the control plane to be Ready; 0 does not wait")
	cmd.Flags().BoolVar(&f.retain, "retain", false, "keep the cluster's processes and state when creation fails, for inspection")
	cmd.Flags().BoolVar(&f.bootstrap, "bootstrap", false, "make it a Cluster API bootstrap cluster: install cert-manager and the cluster-api, kubeadm and local providers with clusterctl init, as TKG does on its kind cluster")
	cmd.Flags().StringVar(&f.pkiDir, "pki-dir", "", "sign the cluster's certificates with the CAs in this kubeadm pki directory instead of new ones")
	return cmd
}
