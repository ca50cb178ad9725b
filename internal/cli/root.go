package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli/clientconfig"
	"github.com/slipway-dev/slipway/internal/cli/cluster"
	"github.com/slipway-dev/slipway/internal/cli/component"
	"github.com/slipway-dev/slipway/internal/cli/feature"
	"github.com/slipway-dev/slipway/internal/cli/kubernetesrelease"
	"github.com/slipway-dev/slipway/internal/cli/local"
	"github.com/slipway-dev/slipway/internal/cli/managementcluster"
	"github.com/slipway-dev/slipway/internal/cli/packages"
	"github.com/slipway-dev/slipway/internal/cli/plugin"
	"github.com/slipway-dev/slipway/internal/cli/ui"
	"github.com/slipway-dev/slipway/internal/cli/version"
	"github.com/slipway-dev/slipway/internal/cli/vsphere"
)

// NewCommand returns the root `slipway` command.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "slipway",
		Short: "Build and run Tanzu Kubernetes Grid compatible management and workload clusters",
		Long: "slipway builds a Cluster API management cluster the way Tanzu Kubernetes Grid does, and creates,\n" +
			"upgrades, scales and deletes workload clusters whose add-on packages come from a Kubernetes release.",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every duration flag of every command is a wait or a period: none may be negative.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			cmd.Flags().Visit(func(f *pflag.Flag) {
				if d, perr := time.ParseDuration(f.Value.String()); err == nil && f.Value.Type() == "duration" && perr == nil && d < 0 {
					err = fmt.Errorf("--%s %s is negative: give a duration of 0 or more, such as 30s or 5m", f.Name, f.Value)
				}
			})
			return err
		},
	}
	if args := component.ImageArgs(os.Args); args != nil {
		cmd.SetArgs(args)
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	// tanzu's target command: `tanzu kubernetes cluster create` is `tanzu cluster create`.
	target := &cobra.Command{
		Use:     plugin.Target,
		Aliases: []string{"k8s"},
		Short:   "The plugins whose target is Kubernetes, as `tanzu kubernetes …` (the same commands as at the top)",
	}
	target.AddCommand(plugins(streams)...)
	top := plugins(streams)
	cmd.AddCommand(top...)
	cmd.AddCommand(
		version.NewCommand(streams),
		target,
		plugin.NewCommand(streams, top),
		clientconfig.NewCommand(streams),
		ui.NewCommand(streams),
		local.NewCommand(streams),
		component.NewCommand(streams),
		vsphere.NewCommand(streams),
	)
	return cmd
}

// plugins returns the commands that are plugins of the tanzu CLI, each with its `version`.
func plugins(streams genericiooptions.IOStreams) []*cobra.Command {
	cmds := []*cobra.Command{
		managementcluster.NewCommand(streams),
		cluster.NewCommand(streams),
		packages.NewCommand(streams),
		kubernetesrelease.NewCommand(streams),
		feature.NewCommand(streams),
	}
	for _, c := range cmds {
		c.AddCommand(version.NewPluginCommand(streams))
	}
	return cmds
}
