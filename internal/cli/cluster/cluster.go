// Package cluster holds `slipway cluster`, tanzu's workload-cluster noun, run against a
// management cluster: create, list, get, scale, node-pool, upgrade, available-upgrades,
// kubeconfig and delete.
package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/config"
	"github.com/slipway-dev/slipway/internal/kubeconfig"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/statedir"
)

// target is the management cluster the commands act on: --kubeconfig and --context, else the
// current one of this host (managementcluster.Current).
type target struct {
	k         cliutil.KubeconfigFlags
	namespace string
}

func (t *target) client() (client.Client, error) {
	return t.k.ManagementClient(os.Stderr)
}

// NewCommand returns `slipway cluster`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	t := &target{}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Create, list, scale, upgrade and delete workload clusters of the management cluster",
	}
	t.k.AddPersistent(cmd)
	cmd.AddCommand(newCreate(t, streams), newList(t, streams), newGet(t, streams), newScale(t, streams), newNodePool(t, streams),
		newUpgrade(t, streams), newAvailableUpgrades(t, streams), newKubeconfig(t, streams), newDelete(t, streams), newMachineHealthCheck(t, streams), newCredentials(t, streams))
	return cmd
}

func newCreate(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	var (
		file, plan, cni, namespace, tkr string
		cp, workers                     int
		dryRun                          bool
		timeout                         time.Duration
		progressFlags                   cliutil.ProgressFlags
	)
	cmd := &cobra.Command{
		Use:   "create [NAME]",
		Short: "Create a workload cluster from TKG's flat configuration file or a ClusterClass Cluster file, and wait until it and its core packages are ready",
		Long: "Create a workload cluster, as tanzu cluster create does, from either input TKG takes:\n\n" +
			"  - TKG's flat VARIABLE: value file: converted into a ClusterClass Cluster, saved under clusterconfigs/, then created;\n" +
			"  - a ClusterClass Cluster (TKG 2.x's input, and what clusterconfigs/ holds), alone or with the Secrets, *Configs and\n" +
			"    ClusterBootstrap it needs in the same file: created as given (a Cluster without a class is refused, as TKG does).\n\n" +
			"Both then wait for the control plane, the nodes and the core packages.",
		Example: "  slipway cluster create wc -f wc.yaml\n" +
			"  slipway cluster create -f ~/.config/slipway/clusterconfigs/wc.yaml\n" +
			"  slipway cluster create wc --plan dev -w 2 --cni calico --dry-run",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := t.client()
			if err != nil {
				return err
			}
			home, err := statedir.Path()
			if err != nil {
				return err
			}
			set := map[string]string{}
			for flag, variable := range map[string]string{"plan": config.ClusterPlan, "cni": config.CNI, "namespace": config.Namespace,
				"controlplane-machine-count": config.ControlPlaneMachineCount, "worker-machine-count": config.WorkerMachineCount} {
				if cmd.Flags().Changed(flag) {
					set[variable] = cmd.Flags().Lookup(flag).Value.String()
				}
			}
			p, err := progressFlags.Printer(streams.ErrOut)
			if err != nil {
				return err
			}
			defer p.Close()
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return cluster.Create(cmd.Context(), cluster.CreateOptions{
				Name: name, File: file, Environ: os.Environ(), Set: set, Client: c, Home: home,
				DryRun: dryRun, Out: streams.Out, Timeout: timeout, Progress: p, CheckHost: cliutil.CheckHost, TKR: tkr,
			})
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the cluster configuration file: TKG's flat VARIABLE: value file, or a ClusterClass Cluster with the objects it needs")
	cmd.Flags().StringVarP(&plan, "plan", "p", "", "the cluster plan, dev or prod (CLUSTER_PLAN)")
	cmd.Flags().StringVar(&cni, "cni", "", "the CNI, antrea or calico (CNI)")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "the namespace of the cluster (NAMESPACE)")
	cmd.Flags().StringVar(&tkr, "tkr", "", "the Kubernetes release: its name (v1.35.4---vmware.1-tkg.1) or a prefix of its name or version (v1.34); sets KUBERNETES_VERSION")
	cmd.Flags().IntVarP(&cp, "controlplane-machine-count", "c", 0, "number of control-plane machines (CONTROL_PLANE_MACHINE_COUNT)")
	cmd.Flags().IntVarP(&workers, "worker-machine-count", "w", 0, "number of workers (WORKER_MACHINE_COUNT)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the Cluster (and its ClusterBootstrap) and create nothing")
	cmd.Flags().DurationVarP(&timeout, "timeout", "t", 30*time.Minute, "how long each wait may take")
	progressFlags.Add(cmd)
	return cmd
}

func newList(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	var (
		all, includeMgmt bool
		output           string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the workload clusters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := t.client()
			if err != nil {
				return err
			}
			list, err := cluster.List(cmd.Context(), c, cluster.ListOptions{Namespace: t.namespace, AllNamespaces: all, IncludeManagementCluster: includeMgmt})
			if err != nil {
				return err
			}
			switch output {
			case "json":
				if list == nil {
					list = []cluster.Summary{}
				}
				data, err := json.MarshalIndent(list, "", "  ")
				if err != nil {
					return err
				}
				_, err = streams.Out.Write(data)
				return err
			case "yaml":
				data, err := yaml.Marshal(list)
				if err != nil {
					return err
				}
				_, err = streams.Out.Write(data)
				return err
			case "", "table":
				var rows [][]string
				for _, s := range list {
					rows = append(rows, []string{s.Name, s.Namespace, s.Status, s.ControlPlane, s.Workers, s.Kubernetes, s.RolesColumn(), s.Plan, s.TKR})
				}
				return cliutil.Table(streams.Out, []string{"NAME", "NAMESPACE", "STATUS", "CONTROLPLANE", "WORKERS", "KUBERNETES", "ROLES", "PLAN", "TKR"}, rows)
			}
			return fmt.Errorf("invalid value %q for --output (-o): use %s", output, cliutil.Formats)
		},
	}
	cmd.Flags().StringVarP(&t.namespace, "namespace", "n", "default", "the namespace")
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "every namespace")
	cmd.Flags().BoolVar(&includeMgmt, "include-management-cluster", false, "list the management cluster too (it is in tkg-system: add -A)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: "+cliutil.Formats)
	return cmd
}

func newScale(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	o := cluster.ScaleOptions{}
	cmd := &cobra.Command{
		Use:   "scale NAME",
		Short: "Scale a workload cluster's control plane or workers",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := t.client()
			if err != nil {
				return err
			}
			p := progressOf(streams)
			o.CheckHost = cliutil.CheckHost
			return cluster.Scale(cmd.Context(), c, client.ObjectKey{Namespace: t.namespace, Name: args[0]}, o, p)
		},
	}
	cmd.Flags().StringVarP(&t.namespace, "namespace", "n", "default", "the namespace of the cluster")
	cmd.Flags().IntVarP(&o.ControlPlane, "controlplane-machine-count", "c", 0, "number of control-plane machines")
	cmd.Flags().IntVarP(&o.Workers, "worker-machine-count", "w", 0, "number of workers")
	cmd.Flags().StringVarP(&o.NodePool, "node-pool-name", "p", "", "the node pool (machine deployment) to scale")
	return cmd
}

func newDelete(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	var (
		yes     bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a workload cluster and wait until it is gone",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !yes {
				if err := cliutil.Confirm(streams, fmt.Sprintf("Deleting workload cluster '%s'. Are you sure?", args[0])); err != nil {
					return err
				}
			}
			c, err := t.client()
			if err != nil {
				return err
			}
			home, err := statedir.Path()
			if err != nil {
				return err
			}
			p := progressOf(streams)
			defer p.Close()
			if err := p.Audit(cluster.AuditLog(home, args[0])); err != nil {
				return err
			}
			if err := cluster.Delete(cmd.Context(), c, client.ObjectKey{Namespace: t.namespace, Name: args[0]}, timeout, p); err != nil {
				return err
			}
			// Deleted: its audit log goes, as TKG's.
			if err := os.Remove(p.AuditPath()); err != nil && !os.IsNotExist(err) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&t.namespace, "namespace", "n", "default", "the namespace of the cluster")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	cmd.Flags().DurationVarP(&timeout, "timeout", "t", 30*time.Minute, "how long to wait for the cluster to be gone")
	return cmd
}

// progressOf is the printer of the commands without -v: their few lines on stderr.
func progressOf(streams genericiooptions.IOStreams) *progress.Printer {
	return progress.ForWriter(streams.ErrOut)
}

// simulatedTimeout bounds `cluster get`'s list of the workload cluster's pods.
const simulatedTimeout = 5 * time.Second

func newGet(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	var treeOpts cluster.TreeOptions
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show a workload cluster: its state, its Cluster API objects with their conditions, its release and add-on packages",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := t.client()
			if err != nil {
				return err
			}
			key := client.ObjectKey{Namespace: t.namespace, Name: args[0]}
			s, tree, cb, err := cluster.Get(cmd.Context(), c, key, treeOpts)
			if err != nil {
				return err
			}
			if err := cliutil.Table(streams.Out, []string{"NAME", "NAMESPACE", "STATUS", "CONTROLPLANE", "WORKERS", "KUBERNETES", "ROLES", "TKR"},
				[][]string{{s.Name, s.Namespace, s.Status, s.ControlPlane, s.Workers, s.Kubernetes, s.RolesColumn(), s.TKR}}); err != nil {
				return err
			}
			fmt.Fprint(streams.Out, "\n\nDetails:\n\n")
			if err := cluster.PrintTree(streams.Out, tree); err != nil {
				return err
			}
			if cb == nil {
				return nil
			}
			fmt.Fprint(streams.Out, "\n\nAdd-ons:\n\n")
			if err := cluster.PrintPackages(streams.Out, cb); err != nil {
				return err
			}
			// Without make images' layout, stand-ins are told by their names alone.
			standIns, _ := cliutil.StandInDigests()
			simulated, err := cluster.SimulatedWorkloads(cmd.Context(), c, key, standIns, simulatedTimeout)
			cluster.PrintSimulated(streams.Out, simulated, err)
			return nil
		},
	}
	cmd.Flags().StringVarP(&t.namespace, "namespace", "n", "default", "the namespace of the cluster")
	cliutil.AddTreeFlags(cmd, &treeOpts)
	return cmd
}

func newKubeconfig(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "kubeconfig", Short: "Get a workload cluster's kubeconfig"}
	var (
		admin      bool
		exportFile string
	)
	get := &cobra.Command{
		Use:   "get NAME",
		Short: "Save a workload cluster's admin kubeconfig into the kubeconfig (or --export-file), without switching to it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !admin {
				return fmt.Errorf("only --admin credentials are available: slipway's clusters have no identity provider (pinniped) configured yet; add --admin")
			}
			c, err := t.client()
			if err != nil {
				return err
			}
			cfg, err := cluster.AdminKubeconfig(cmd.Context(), c, client.ObjectKey{Namespace: t.namespace, Name: args[0]})
			if err != nil {
				return err
			}
			path := exportFile
			if path == "" {
				path = kubeconfig.DefaultPath()
			}
			if err := kubeconfig.Merge(path, cfg, ""); err != nil {
				return err
			}
			cliutil.CredentialsSaved(streams.ErrOut, args[0], path, exportFile != "")
			return nil
		},
	}
	get.Flags().StringVarP(&t.namespace, "namespace", "n", "default", "the namespace of the cluster")
	get.Flags().BoolVar(&admin, "admin", false, "the administrator's credentials")
	get.Flags().StringVar(&exportFile, "export-file", "", "write to this file instead of merging into the kubeconfig")
	cmd.AddCommand(get)
	return cmd
}

func newUpgrade(t *target, streams genericiooptions.IOStreams) *cobra.Command {
	var (
		osFlags       cliutil.OSFlags
		tkr           string
		yes           bool
		timeout       time.Duration
		progressFlags cliutil.ProgressFlags
	)
	cmd := &cobra.Command{
		Use:   "upgrade NAME",
		Short: "Upgrade a workload cluster to a newer Kubernetes release (the newest its UpdatesAvailable condition lists, or --tkr)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := t.client()
			if err != nil {
				return err
			}
			key := client.ObjectKey{Namespace: t.namespace, Name: args[0]}
			u, err := cluster.PlanUpgrade(cmd.Context(), c, key, tkr)
			if err != nil {
				return err
			}
			if u.OSImage, err = osFlags.Selector(); err != nil {
				return err
			}
			if !yes {
				if err := cliutil.Confirm(streams, fmt.Sprintf("Upgrading workload cluster '%s' to kubernetes version '%s', tkr version '%s'. Are you sure?", args[0], u.Kubernetes, u.Version)); err != nil {
					return err
				}
			}
			p, err := progressFlags.Printer(streams.ErrOut)
			if err != nil {
				return err
			}
			defer p.Close()
			home, err := statedir.Path()
			if err != nil {
				return err
			}
			if err := p.Audit(cluster.AuditLog(home, key.Name)); err != nil {
				return err
			}
			if err := cluster.RunUpgrade(cmd.Context(), c, key, u, timeout, p); err != nil {
				return err
			}
			p.Infof("Cluster '%s' successfully upgraded to kubernetes version '%s'", key.Name, u.Kubernetes)
			return nil
		},
	}
	cmd.Flags().StringVarP(&t.namespace, "namespace", "n", "default", "the namespace of the cluster")
	cmd.Flags().StringVar(&tkr, "tkr", "", "the release to upgrade to: its name or a prefix of it (v1.35); default the newest available")
	osFlags.Add(cmd)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "upgrade without asking")
	cmd.Flags().DurationVarP(&timeout, "timeout", "t", 30*time.Minute, "how long each wait may take")
	progressFlags.Add(cmd)
	return cmd
}
