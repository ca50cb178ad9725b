// Package clientconfig holds `slipway config get`: the tanzu CLI's client configuration as slipway
// has it, made from its state rather than kept in a file of its own.
package clientconfig

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/client/managementcluster"
	"github.com/slipway-dev/slipway/internal/statedir"
)

// NewCommand returns `slipway config`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the client configuration, as `tanzu config`",
	}
	var kubeconfig string
	get := &cobra.Command{
		Use:   "get",
		Short: "Print the client configuration as the tanzu CLI's ClientConfig YAML",
		Long: "Print the client configuration as the tanzu CLI's ClientConfig YAML: the management clusters made\n" +
			"from this host (servers), the one commands act on when none is named (current), and the features\n" +
			"of slipway's plugins (context-aware-cli-for-plugins: they always act on the current management\n" +
			"cluster). slipway keeps no file of it: it is read from slipway's state directory each time, so\n" +
			"`tanzu config set` has no counterpart.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			home, err := statedir.Path()
			if err != nil {
				return err
			}
			cfg, err := managementcluster.ClientConfig(home, kubeconfig)
			if err != nil {
				return err
			}
			data, err := yaml.Marshal(cfg)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(streams.Out, string(data))
			return err
		},
	}
	get.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig whose current context picks the current management cluster (default kubectl's)")
	cmd.AddCommand(get)
	return cmd
}
