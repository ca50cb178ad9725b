package cluster

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	"github.com/slipway-dev/slipway/internal/client/managementcluster"
	"github.com/slipway-dev/slipway/internal/config"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/hostlimits"
	"github.com/slipway-dev/slipway/internal/pki"
	"github.com/slipway-dev/slipway/internal/registrytrust"
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
	infrastructure    string
	packageRepository string
	timeout           time.Duration
	progress          cliutil.ProgressFlags
}

// createFlagNames are the flags behind the fields of localcluster.CreateOptions.
var createFlagNames = map[string]string{
	"controlPlaneNodes": "--control-plane-nodes",
	"workerNodes":       "--worker-nodes",
	"kubernetesVersion": "--kubernetes-version",
}

func newCreateCommand(streams genericiooptions.IOStreams) *cobra.Command {
	f := &createFlags{}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a local cluster",
		Long: "Create a local cluster.\n\n" +
			"Before any node starts, the host's limits (inotify instances and watches, open files, threads, memory, disk) are checked " +
			"against what the new nodes need; a limit that falls short is named with its value, the need and the command that raises it. " +
			"Set " + hostlimits.RaiseEnv + "=true and run as root to let slipway raise the kernel's limits itself.",
		Example: "  slipway local cluster create dev\n" +
			"  slipway local cluster create ha --control-plane-nodes 3 --worker-nodes 2 --kubernetes-version v1.34.3\n" +
			"  slipway local cluster create app --worker-nodes 2\n" +
			"  slipway local cluster create boot --bootstrap\n" +
			"  slipway local cluster create vboot --bootstrap --infrastructure-provider vsphere",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if os.Geteuid() != 0 {
				return errors.New(localcluster.NodesNeedRoot)
			}
			for _, name := range []string{"package-repository", "timeout", "infrastructure-provider"} {
				if cmd.Flags().Changed(name) && !f.bootstrap {
					return fmt.Errorf("--%s is used only with --bootstrap: add --bootstrap, or drop --%s", name, name)
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
			p, err := f.progress.Printer(streams.Out)
			if err != nil {
				return err
			}
			defer p.Close()
			opts := localcluster.CreateOptions{
				Name:              args[0],
				KubernetesVersion: f.kubernetesVersion,
				ControlPlaneNodes: f.controlPlaneNodes,
				WorkerNodes:       f.workerNodes,
				Kubeconfig:        f.kubeconfig,
				Wait:              f.wait,
				Retain:            f.retain,
				CAs:               cas,
				Progress:          p,
			}
			// The nodes pull from a copy of TKG's images on this host's loopback that
			// TKG_CUSTOM_IMAGE_REPOSITORY names. A bootstrap cluster, which installs from the
			// copy, refuses one elsewhere, which no node reaches; a plain cluster says so and
			// goes on, what is installed on it later being the user's.
			custom := os.Getenv(config.CustomImageRepository)
			registry, err := localcluster.HostRegistry(config.CustomImageRepository, custom)
			switch {
			case err != nil && f.bootstrap:
				return err
			case err != nil:
				p.Infof("Warning: %v: its images will not pull on this cluster", err)
			case registry != "":
				if err := localcluster.CheckHostRegistries(config.CustomImageRepository, []string{registry}); err != nil {
					return err
				}
				opts.HostRegistries = []string{registry}
			}
			if f.bootstrap {
				asked := ""
				if cmd.Flags().Changed("package-repository") {
					asked = f.packageRepository
				}
				var repository string
				if repository, err = managementcluster.PackageRepositoryOf(asked, os.Getenv(config.CustomImageRepository)); err != nil {
					return err
				}
				var env *config.Variables
				if env, err = config.Read("", os.Environ()); err != nil {
					return err
				}
				var trust registrytrust.Trust
				if trust, err = config.ReadRegistryTrust(env); err != nil {
					return err
				}
				bo := managementcluster.BootstrapOptions{Cluster: opts, PackageRepository: repository, Trust: trust, Timeout: f.timeout, InfrastructureProvider: f.infrastructure}
				switch f.infrastructure {
				case "local":
				case "vsphere":
					// CAPV's manager starts with the vCenter credentials of the environment.
					vs, err := config.ReadVSphere(env)
					if err != nil {
						return fmt.Errorf("--infrastructure-provider vsphere: %w", err)
					}
					bo.ProviderVariables = vs.ProviderVariables()
					if bo.Cluster.Egress, err = vsphereEgress(env, vs); err != nil {
						return err
					}
				default:
					return fmt.Errorf("invalid --infrastructure-provider %q: use local or vsphere", f.infrastructure)
				}
				err = managementcluster.Bootstrap(cmd.Context(), store, bo)
			} else {
				err = store.Create(cmd.Context(), opts)
			}
			return cliutil.FlagError(err, createFlagNames)
		},
	}
	cmd.Flags().StringVar(&f.kubernetesVersion, "kubernetes-version", assets.DefaultKubernetesVersion(), "Kubernetes version of the nodes")
	cmd.Flags().IntVar(&f.controlPlaneNodes, "control-plane-nodes", 1, "number of control-plane nodes; several form one etcd cluster behind a load balancer")
	cmd.Flags().IntVar(&f.workerNodes, "worker-nodes", 0, "number of worker nodes")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig to merge the cluster's context into (default $KUBECONFIG or ~/.kube/config)")
	cmd.Flags().DurationVar(&f.wait, "wait", 2*time.Minute, "how long to wait for the control plane to be Ready; 0 does not wait")
	cmd.Flags().BoolVar(&f.retain, "retain", false, "keep the cluster's processes and state when creation fails, for inspection")
	cmd.Flags().BoolVar(&f.bootstrap, "bootstrap", false, "make it a TKG bootstrap cluster: install kapp-controller, cert-manager and the cluster-api, kubeadm, in-cluster IPAM and infrastructure providers (clusterctl init), the management package repository and tkg-pkg, as TKG does on its kind cluster")
	cmd.Flags().StringVar(&f.infrastructure, "infrastructure-provider", "local", "with --bootstrap: the Cluster API infrastructure provider and ClusterClass to install, local or vsphere (CAPV, with the vCenter credentials of VSPHERE_SERVER, VSPHERE_USERNAME and VSPHERE_PASSWORD in the environment)")
	cmd.Flags().StringVar(&f.packageRepository, "package-repository", managementcluster.DefaultPackageRepository, "with --bootstrap: the management package repository's imgpkg bundle ('make packages' pushes it); the TKR catalogue is read from beside it (default: slipway-repo:v0.1.0 in $TKG_CUSTOM_IMAGE_REPOSITORY when it is set)")
	cmd.Flags().DurationVar(&f.timeout, "timeout", managementcluster.DefaultTimeout, "with --bootstrap: how long each wait of the payload (kapp-controller, each provider, each package) may take")
	cmd.Flags().StringVar(&f.pkiDir, "pki-dir", "", "sign the cluster's certificates with the CAs in this kubeadm pki directory instead of new ones")
	f.progress.Add(cmd)
	return cmd
}

// vsphereEgress is what a vSphere bootstrap cluster's nodes reach through this host
// (managementcluster.BootstrapEgress): the vCenter of vs and, when VSPHERE_CONTROL_PLANE_ENDPOINT
// is set, the management cluster's endpoint, at CLUSTER_API_SERVER_PORT (6443 when unset).
func vsphereEgress(env *config.Variables, vs *config.VSphere) ([]string, error) {
	port, err := config.ReadAPIServerPort(env)
	if err != nil {
		return nil, err
	}
	return managementcluster.BootstrapEgress("vsphere", vs.Server, vs.ControlPlaneEndpoint, port), nil
}
