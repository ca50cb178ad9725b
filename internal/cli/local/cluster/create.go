package cluster

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/client/initregion"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/pki"
	"github.com/slipway-dev/slipway/internal/progress"
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
	packageRepository string
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
			if cmd.Flags().Changed("package-repository") && !f.bootstrap {
				return fmt.Errorf("--package-repository is used only with --bootstrap: add --bootstrap, or drop --package-repository")
			}
			var repo *initregion.Repository
			if f.bootstrap {
				// Before anything is created: the repository must hold what the payload needs.
				var err error
				if repo, err = initregion.ReadRepository(cmd.Context(), f.packageRepository); err != nil {
					return fmt.Errorf("--package-repository: %w", err)
				}
			}
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
			// TKG's bootstrap payload: kapp-controller, clusterctl init with cert-manager, the
			// core, kubeadm and local providers, then the management packages.
			dirs, err := store.Dirs(args[0])
			if err != nil {
				return err
			}
			err = initregion.Run(cmd.Context(), initregion.Options{
				Kubeconfig: dirs.Kubeconfig(), WorkDir: dirs.Root, Repository: repo,
				InfrastructureProvider: "local", Timeout: 5 * time.Minute, Progress: progress.ForWriter(streams.Out),
			})
			if err != nil {
				return fmt.Errorf("%w\nthe cluster %q is kept for inspection; `slipway local cluster delete %s` removes it", err, args[0], args[0])
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&f.kubernetesVersion, "kubernetes-version", assets.DefaultKubernetesVersion(), "Kubernetes version of the nodes")
	cmd.Flags().IntVar(&f.controlPlaneNodes, "control-plane-nodes", 1, "number of control-plane nodes; several form one etcd cluster behind a load balancer")
	cmd.Flags().IntVar(&f.workerNodes, "worker-nodes", 0, "number of worker nodes")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig to merge the cluster's context into (default $KUBECONFIG or ~/.kube/config)")
	cmd.Flags().DurationVar(&f.wait, "wait", 2*time.Minute, "how long to wait for the control plane to be Ready; 0 does not wait")
	cmd.Flags().BoolVar(&f.retain, "retain", false, "keep the cluster's processes and state when creation fails, for inspection")
	cmd.Flags().BoolVar(&f.bootstrap, "bootstrap", false, "make it a TKG bootstrap cluster: install kapp-controller, cert-manager and the cluster-api, kubeadm and local providers (clusterctl init), the management package repository and tkg-pkg, as TKG does on its kind cluster")
	cmd.Flags().StringVar(&f.packageRepository, "package-repository", initregion.DefaultPackageRepository, "with --bootstrap: the management package repository's imgpkg bundle ('make packages' pushes it); the TKR catalogue is read from beside it")
	cmd.Flags().StringVar(&f.pkiDir, "pki-dir", "", "sign the cluster's certificates with the CAs in this kubeadm pki directory instead of new ones")
	return cmd
}
