// Package version holds the `slipway version` command.
package version

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/assets"
	slipwayversion "github.com/slipway-dev/slipway/internal/version"
)

// NewCommand returns `slipway version`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print slipway's version, build and the Kubernetes versions it runs",
		Long: "Print slipway's version, the date and short SHA of the commit it was built from (the tanzu CLI's\n" +
			"buildDate and sha), and the Kubernetes and etcd versions its nodes run.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			date, sha := slipwayversion.Build()
			_, err := fmt.Fprintf(streams.Out, "version: %s\nbuildDate: %s\nsha: %s\nkubernetes versions: %s\netcd version: %s\n",
				slipwayversion.Get(), date, sha, strings.Join(assets.KubernetesVersions, ", "), assets.EtcdVersion)
			return err
		},
	}
}

// NewPluginCommand returns the `version` of a command that is a plugin of the tanzu CLI
// (`tanzu cluster version`): slipway's plugins are built into it, so each has slipway's version.
func NewPluginCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version (slipway's: its plugins are built in)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(streams.Out, slipwayversion.Get())
			return err
		},
	}
}
