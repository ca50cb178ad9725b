// Package managementcluster holds `slipway management-cluster`, tanzu's management-cluster
// noun: create builds a self-managed management cluster from a TKG configuration file.
package managementcluster

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/client/managementcluster"
	"github.com/slipway-dev/slipway/internal/config"
	"github.com/slipway-dev/slipway/internal/kubeconfig"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/statedir"
)

// NewCommand returns `slipway management-cluster`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "management-cluster",
		Aliases: []string{"mc"},
		Short:   "Create and operate the management cluster",
	}
	cmd.AddCommand(newCreateCommand(streams), newGetCommand(streams), newUpgradeCommand(streams), newKubeconfigCommand(streams), newDeleteCommand(streams),
		newCEIPCommand(streams), newCredentialsCommand(streams))
	return cmd
}

// nameOrCurrent returns the name given, or the current management cluster of this home
// (managementcluster.Current) with kubeconfig's current context. A guess is said on errOut, and
// refused for verb when it is not empty: what cannot be undone is not done on a guess.
func nameOrCurrent(args []string, home, kubeconfig, verb string, errOut io.Writer) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	name, guessed, err := managementcluster.Current(home, kubeconfig)
	switch {
	case err != nil:
		return "", err
	case name == "":
		return "", fmt.Errorf("no management cluster was created from this host: name one")
	case guessed && verb != "":
		return "", managementcluster.GuessedError(home, verb)
	case guessed:
		fmt.Fprintf(errOut, "Using management cluster %s, the last created (name another, or switch to its context NAME-admin@NAME)\n", name)
	}
	return name, nil
}

// target is the management cluster a command acts on: its name (given, or the one this host
// made), slipway's home, its admin context in the kubeconfig and a client through it.
type target struct {
	name, home string
	kubeconfig cliutil.KubeconfigFlags
	client     client.Client
}

// managementTarget returns the management cluster a command acts on, reached through its admin
// context in kubeconfig.
func managementTarget(args []string, kubeconfig, verb string, errOut io.Writer) (*target, error) {
	home, err := statedir.Path()
	if err != nil {
		return nil, err
	}
	name, err := nameOrCurrent(args, home, kubeconfig, verb, errOut)
	if err != nil {
		return nil, err
	}
	t := &target{name: name, home: home, kubeconfig: cliutil.KubeconfigFlags{Kubeconfig: kubeconfig, Context: managementcluster.ContextName(name)}}
	t.client, err = t.kubeconfig.Client()
	return t, err
}

func newDeleteCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var (
		yes, force           bool
		kubeconfig, existing string
		timeout              time.Duration
		progress             cliutil.ProgressFlags
	)
	cmd := &cobra.Command{
		Use:   "delete [NAME]",
		Short: "Delete a management cluster: its Cluster API objects move to a cleanup cluster, which deletes its machines",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := statedir.Path()
			if err != nil {
				return err
			}
			store, err := localcluster.DefaultStore()
			if err != nil {
				return err
			}
			name, err := nameOrCurrent(args, home, kubeconfig, "delete", streams.ErrOut)
			if err != nil {
				return err
			}
			if !yes {
				if err := cliutil.Confirm(streams, fmt.Sprintf("Deleting management cluster '%s'. Are you sure?", name)); err != nil {
					return err
				}
			}
			p, err := progress.Printer(streams.ErrOut)
			if err != nil {
				return err
			}
			defer p.Close()
			return managementcluster.Delete(cmd.Context(), managementcluster.DeleteOptions{
				Name: name, Kubeconfig: kubeconfig, Force: force, UseExistingCleanup: existing, Home: home, Store: store, Timeout: timeout, Progress: p,
			})
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	cmd.Flags().BoolVar(&force, "force", false, "delete even when it manages workload clusters")
	cmd.Flags().StringVarP(&existing, "use-existing-cleanup-cluster", "e", "", "the kubeconfig of an existing cluster (its current context) to use as the cleanup cluster, instead of making one; it is kept")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig holding the management cluster's context (default $KUBECONFIG or ~/.kube/config)")
	cmd.Flags().DurationVarP(&timeout, "timeout", "t", 30*time.Minute, "how long each wait may take")
	progress.Add(cmd)
	return cmd
}

type createFlags struct {
	file, name, plan, cni string
	useExisting, yes      bool
	onVSphere7            bool
	dryRun                bool
	timeout               time.Duration
	kubeconfig            string
	packageRepository     string
	progress              cliutil.ProgressFlags
	// ui serves the installer instead of reading -f; bind and browser are where and how.
	ui            bool
	bind, browser string
	bindRemote    bool
}

func newCreateCommand(streams genericiooptions.IOStreams) *cobra.Command {
	f := &createFlags{}
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a management cluster: a bootstrap cluster, Cluster API and TKG's packages, the cluster, and the pivot into it",
		Long: "Create a management cluster as TKG does: an ephemeral bootstrap cluster with kapp-controller, Cluster API\n" +
			"and tkg-pkg; the management Cluster from the ClusterClass of its infrastructure provider; the same payload\n" +
			"on it; clusterctl move of every Cluster API object into it; the bootstrap cluster deleted.\n\n" +
			"The configuration is TKG's flat file (CLUSTER_NAME, CLUSTER_PLAN, INFRASTRUCTURE_PROVIDER, ...), with the\n" +
			"environment overriding it and the flags overriding both. Without -f, a local management cluster.",
		Example: "  slipway management-cluster create\n" +
			"  slipway management-cluster create -f mgmt.yaml\n" +
			"  slipway management-cluster create --name mgmt --dry-run",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := statedir.Path()
			if err != nil {
				return err
			}
			store, err := localcluster.DefaultStore()
			if err != nil {
				return err
			}
			if f.ui {
				return serveInstaller(cmd, streams, f, home, store)
			}
			if f.progress.LogFile == "" {
				if f.progress.LogFile, err = progress.NewLogFile(filepath.Join(home, "logs"), "management-cluster-create-", time.Now()); err != nil {
					return err
				}
			}
			p, err := f.progress.Printer(streams.ErrOut)
			if err != nil {
				return err
			}
			defer p.Close()
			p.Infof("Logs of the command execution can also be found at: %s", p.LogPath())
			set := map[string]string{}
			for flag, variable := range map[string]string{"name": config.ClusterName, "plan": config.ClusterPlan, "cni": config.CNI} {
				if cmd.Flags().Changed(flag) {
					set[variable] = cmd.Flags().Lookup(flag).Value.String()
				}
			}
			repository := ""
			if cmd.Flags().Changed("package-repository") {
				repository = f.packageRepository
			}
			if f.onVSphere7 {
				set[config.DeployTKGOnVSphere7] = "true"
			}
			// With -e, --kubeconfig names the bootstrap cluster (its current context), and the
			// management cluster's context goes to the default kubeconfig.
			useExisting, mergeInto := "", f.kubeconfig
			if f.useExisting {
				if useExisting, mergeInto = f.kubeconfig, ""; useExisting == "" {
					useExisting = kubeconfig.DefaultPath()
				}
			}
			_, err = managementcluster.Create(cmd.Context(), managementcluster.CreateOptions{
				File: f.file, Environ: os.Environ(), Set: set, PackageRepository: repository,
				Home: home, Store: store, Kubeconfig: mergeInto, UseExistingBootstrap: useExisting,
				Timeout: f.timeout, DryRun: f.dryRun, Progress: p, Out: streams.Out,
				AcceptThumbprint: acceptThumbprint(streams, p, f.yes),
			})
			if err != nil {
				return fmt.Errorf("%w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&f.file, "file", "f", "", "the cluster configuration file (TKG's flat VARIABLE: value file)")
	cmd.Flags().StringVar(&f.name, "name", "", "the management cluster's name (CLUSTER_NAME)")
	cmd.Flags().StringVarP(&f.plan, "plan", "p", "", "the cluster plan, dev or prod (CLUSTER_PLAN)")
	cmd.Flags().StringVar(&f.cni, "cni", "", "the CNI (CNI); a management cluster runs antrea")
	cmd.Flags().BoolVarP(&f.useExisting, "use-existing-bootstrap-cluster", "e", false, "use the bootstrap cluster of --kubeconfig's current context instead of making one (what a failed run kept); the management cluster's context then goes to the default kubeconfig")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "print the management Cluster and its ClusterBootstrap; start nothing")
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "create without asking: on vSphere, go on with the vCenter's certificate thumbprint where VSPHERE_TLS_THUMBPRINT is unset or differs, as TKG's -y")
	cmd.Flags().BoolVar(&f.onVSphere7, "deploy-tkg-on-vSphere7", false, "on vSphere 7, deploy a management cluster without asking about vSphere with Tanzu (DEPLOY_TKG_ON_VSPHERE7; slipway never asks)")
	cmd.Flags().DurationVarP(&f.timeout, "timeout", "t", 30*time.Minute, "how long each wait may take")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "the kubeconfig the management cluster's context is merged into (default $KUBECONFIG or ~/.kube/config); with -e, the bootstrap cluster's")
	cmd.Flags().StringVar(&f.packageRepository, "package-repository", managementcluster.DefaultPackageRepository, "the management package repository's imgpkg bundle ('make packages' pushes it; default: slipway-repo:v0.1.0 in TKG_CUSTOM_IMAGE_REPOSITORY when the configuration sets it)")
	cmd.Flags().BoolVarP(&f.ui, "ui", "u", false, "serve the installer UI, a wizard in the browser, instead of reading a configuration file")
	cmd.Flags().StringVarP(&f.bind, "bind", "b", "127.0.0.1:8080", "with --ui: the address the installer serves on (a loopback address, unless --bind-remote)")
	cmd.Flags().BoolVar(&f.bindRemote, "bind-remote", false, "with --ui: let --bind be an address beyond this host, where the printed token is the installer's only guard")
	cmd.Flags().StringVar(&f.browser, "browser", "", "with --ui: the browser command that opens the installer; 'none' opens none (default: the desktop's, xdg-open)")
	f.progress.Add(cmd)
	return cmd
}

// acceptThumbprint answers, for management-cluster create, where TKG asks whether to go on with
// the vCenter's thumbprint: yes with -y, the user's answer on a terminal, else no (the check then
// refuses, naming the thumbprint).
func acceptThumbprint(streams genericiooptions.IOStreams, p *progress.Printer, yes bool) func(host, thumbprint, configured string) bool {
	return func(host, thumbprint, configured string) bool {
		if configured != "" {
			p.Infof("Warning: The %s variable does not match the thumbprint of vSphere %s, the actual thumbprint is %s", config.VSphereTLSThumbprint, host, thumbprint)
		}
		if yes {
			p.Infof("Continuing with the vSphere thumbprint %s (-y)", thumbprint)
			return true
		}
		if !cliutil.Interactive(streams) {
			return false
		}
		return cliutil.Confirm(streams, "Do you want to continue with the vSphere thumbprint "+thumbprint) == nil
	}
}

func newGetCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var (
		kubeconfig string
		treeOpts   cluster.TreeOptions
	)
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "Show the management cluster: its state, its Cluster API objects with their conditions, and its providers",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := managementTarget(args, kubeconfig, "", streams.ErrOut)
			if err != nil {
				return err
			}
			name := t.name
			s, tree, providers, err := managementcluster.Get(cmd.Context(), t.client, name, treeOpts)
			if err != nil {
				return err
			}
			if err := cliutil.Table(streams.Out, []string{"NAME", "NAMESPACE", "STATUS", "CONTROLPLANE", "WORKERS", "KUBERNETES", "ROLES", "PLAN", "TKR"},
				[][]string{{s.Name, s.Namespace, s.Status, s.ControlPlane, s.Workers, s.Kubernetes, s.RolesColumn(), s.Plan, s.TKR}}); err != nil {
				return err
			}
			fmt.Fprint(streams.Out, "\n\nDetails:\n\n")
			if err := cluster.PrintTree(streams.Out, tree); err != nil {
				return err
			}
			fmt.Fprint(streams.Out, "\n\nProviders:\n\n")
			var rows [][]string
			for _, p := range providers {
				//lint:ignore SA1019 TKG's table has the column; clusterctl still records the field.
				rows = append(rows, []string{p.Namespace, p.Name, p.Type, p.ProviderName, p.Version, p.WatchedNamespace})
			}
			return cliutil.Table(streams.Out, []string{"NAMESPACE", "NAME", "TYPE", "PROVIDERNAME", "VERSION", "WATCHNAMESPACE"}, rows)
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig holding the management cluster's context (default $KUBECONFIG or ~/.kube/config)")
	cliutil.AddTreeFlags(cmd, &treeOpts)
	return cmd
}

func newUpgradeCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var (
		tkr, kubeconfig, packageRepository string
		osFlags                            cliutil.OSFlags
		yes                                bool
		timeout                            time.Duration
		progress                           cliutil.ProgressFlags
	)
	cmd := &cobra.Command{
		Use: "upgrade [NAME]",
		Short: "Upgrade the management cluster: its providers, kapp-controller and management packages to the package repository's, " +
			"then its Kubernetes release (the newest its UpdatesAvailable condition lists, or --tkr; kept when none is newer), as a workload cluster's",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := managementTarget(args, kubeconfig, "upgrade", streams.ErrOut)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("package-repository") && packageRepository == "" {
				return fmt.Errorf("--package-repository is empty: name the management package repository's imgpkg bundle, or leave the flag out to use the management cluster's own")
			}
			u, err := managementcluster.PlanUpgrade(cmd.Context(), t.client, managementcluster.UpgradeOptions{Name: t.name, TKR: tkr, PackageRepository: packageRepository})
			if err != nil {
				return err
			}
			if u.OSImage, err = osFlags.Selector(); err != nil {
				return err
			}
			if u.OSImage != "" && u.KeepRelease {
				return fmt.Errorf("--os-name: management cluster %s stays on release %s, and its nodes change OS image with a new release only", t.name, u.TKR)
			}
			if !yes {
				if err := cliutil.Confirm(streams, u.Prompt(t.name)); err != nil {
					return err
				}
			}
			p, err := progress.Printer(streams.ErrOut)
			if err != nil {
				return err
			}
			defer p.Close()
			if err := p.Audit(cluster.AuditLog(t.home, t.name)); err != nil {
				return err
			}
			return managementcluster.RunUpgrade(cmd.Context(), t.name, u, managementcluster.RunOptions{Kubeconfig: t.kubeconfig.Kubeconfig, Context: t.kubeconfig.Context,
				Client: t.client, WorkDir: filepath.Join(t.home, "management", t.name), Timeout: timeout, Progress: p})
		},
	}
	cmd.Flags().StringVar(&tkr, "tkr", "", "the release to upgrade to: its name or a prefix of it (v1.35); default the newest available")
	cmd.Flags().StringVar(&packageRepository, "package-repository", "", "the management package repository's imgpkg bundle to upgrade from (default: the one the management cluster was made from)")
	osFlags.Add(cmd)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "upgrade without asking")
	cmd.Flags().DurationVarP(&timeout, "timeout", "t", 30*time.Minute, "how long each wait may take")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig holding the management cluster's context (default $KUBECONFIG or ~/.kube/config)")
	progress.Add(cmd)
	return cmd
}

func newKubeconfigCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "kubeconfig", Short: "Get the management cluster's kubeconfig"}
	var (
		admin      bool
		exportFile string
	)
	get := &cobra.Command{
		Use:   "get [NAME]",
		Short: "Save the management cluster's admin kubeconfig into the kubeconfig (or --export-file)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if !admin {
				return fmt.Errorf("only --admin credentials are available: slipway's management clusters have no identity provider (pinniped) configured yet; add --admin")
			}
			home, err := statedir.Path()
			if err != nil {
				return err
			}
			name, err := nameOrCurrent(args, home, "", "", streams.ErrOut)
			if err != nil {
				return err
			}
			path, err := managementcluster.ExportKubeconfig(home, name, exportFile)
			if err != nil {
				return err
			}
			cliutil.CredentialsSaved(streams.ErrOut, name, path, exportFile != "")
			return nil
		},
	}
	get.Flags().BoolVar(&admin, "admin", false, "the administrator's credentials")
	get.Flags().StringVar(&exportFile, "export-file", "", "write to this file instead of merging into the kubeconfig")
	cmd.AddCommand(get)
	return cmd
}

// newCEIPCommand returns `ceip-participation get|set`: the management cluster's participation in
// VMware's Customer Experience Improvement Program, recorded where VMware's telemetry reads it.
// slipway only records it: nothing is collected or sent.
func newCEIPCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var kubeconfig, output string
	cmd := &cobra.Command{
		Use:   "ceip-participation",
		Short: "Get or set the management cluster's CEIP participation (recorded only: slipway sends nothing)",
	}
	get := &cobra.Command{
		Use:   "get",
		Short: "Show the current management cluster's CEIP participation: Opt-in or Opt-out",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := managementTarget(nil, kubeconfig, "", streams.ErrOut)
			if err != nil {
				return err
			}
			status, err := managementcluster.CEIP(cmd.Context(), t.client)
			if err != nil {
				return err
			}
			return cliutil.Print(streams.Out, output, []string{"MANAGEMENT-CLUSTER-NAME", "CEIP-STATUS"}, [][]string{{t.name, status}})
		},
	}
	get.Flags().StringVarP(&output, "output", "o", "", "output format: "+cliutil.Formats)
	set := &cobra.Command{
		Use:   "set true|false",
		Short: "Record the current management cluster's CEIP participation",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			optIn, err := strconv.ParseBool(args[0])
			if err != nil {
				return fmt.Errorf("invalid participation %q: use true or false", args[0])
			}
			t, err := managementTarget(nil, kubeconfig, "", streams.ErrOut)
			if err != nil {
				return err
			}
			return managementcluster.SetCEIP(cmd.Context(), t.client, optIn)
		},
	}
	cmd.PersistentFlags().StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig holding the management cluster's context (default $KUBECONFIG or ~/.kube/config)")
	cmd.AddCommand(get, set)
	return cmd
}

// newCredentialsCommand returns `credentials update [NAME]`: new vSphere credentials for the
// management cluster (and, with --cascading, its workload clusters).
func newCredentialsCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var (
		kubeconfig, username, password string
		cascading                      bool
		progress                       cliutil.ProgressFlags
	)
	cmd := &cobra.Command{Use: "credentials", Short: "Update the management cluster's infrastructure credentials"}
	update := &cobra.Command{
		Use:   "update [NAME] --vsphere-user USER --vsphere-password PASSWORD",
		Short: "Update the vSphere credentials of the management cluster, checked against its vCenter first",
		Long: `Update the vSphere credentials of the management cluster: they are checked against its vCenter,
then written where CAPV reads them (capv-manager-bootstrap-credentials and the cluster's identity
Secret); the vSphere CPI and CSI of the cluster follow. With --cascading, every vSphere workload
cluster it manages gets them too.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := managementTarget(args, kubeconfig, "", streams.ErrOut)
			if err != nil {
				return err
			}
			p, err := progress.Printer(streams.ErrOut)
			if err != nil {
				return err
			}
			defer p.Close()
			return managementcluster.UpdateCredentials(cmd.Context(), t.client, t.name, cluster.Credentials{Username: username, Password: password}, cascading, p)
		},
	}
	update.Flags().StringVar(&username, "vsphere-user", "", "the vCenter user (required)")
	update.Flags().StringVar(&password, "vsphere-password", "", "the vCenter user's password (required)")
	update.Flags().BoolVar(&cascading, "cascading", false, "update the credentials of every vSphere workload cluster of the management cluster too")
	update.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig holding the management cluster's context (default $KUBECONFIG or ~/.kube/config)")
	progress.Add(update)
	cmd.AddCommand(update)
	return cmd
}
