// Package plugin holds `slipway plugin`, the tanzu CLI's plugin verbs as they apply to a CLI whose
// plugins are built in: list shows them, clean and repo update have nothing to act on and say so.
package plugin

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	slipwayversion "github.com/slipway-dev/slipway/internal/version"
)

// Target is the tanzu CLI target of every plugin slipway builds in: they act on Kubernetes
// clusters (`tanzu kubernetes …`).
const Target = "kubernetes"

// NewCommand returns `slipway plugin`; plugins are the commands that are tanzu CLI plugins.
func NewCommand(streams genericiooptions.IOStreams, plugins []*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "List slipway's plugins, as `tanzu plugin` (they are built in: nothing is installed or cleaned)",
		Long: "slipway's plugins (management-cluster, cluster, package, feature, kubernetes-release) are built into\n" +
			"its binary, where the tanzu CLI installs each from a plugin repository. `plugin list` shows them;\n" +
			"`plugin clean` and `plugin repo update` are accepted, as TKG's scripts run them, and say that\n" +
			"there is nothing to clean or update.",
	}
	repo := &cobra.Command{Use: "repo", Short: "Plugin repositories (slipway reads none)"}
	repo.AddCommand(newRepoUpdate(streams))
	cmd.AddCommand(newList(streams, plugins), newClean(streams), repo)
	return cmd
}

func newList(streams genericiooptions.IOStreams, plugins []*cobra.Command) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the plugins, with tanzu's columns (DISCOVERY built-in, VERSION slipway's)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return List(streams.Out, output, plugins)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: "+cliutil.Formats)
	return cmd
}

// List prints the plugins as `tanzu plugin list` prints installed standalone plugins.
func List(out io.Writer, format string, plugins []*cobra.Command) error {
	headers := []string{"NAME", "DESCRIPTION", "TARGET", "DISCOVERY", "VERSION", "STATUS"}
	var rows [][]string
	for _, p := range plugins {
		rows = append(rows, []string{p.Name(), p.Short, Target, "built-in", slipwayversion.Get(), "installed"})
	}
	if format == "" || format == "table" {
		if _, err := fmt.Fprintln(out, "Standalone Plugins"); err != nil {
			return err
		}
	}
	return cliutil.Print(out, format, headers, rows)
}

func newClean(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "clean",
		Short: "Accepted as tanzu's: slipway's plugins are built in, so there are none to remove",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(streams.Out, "slipway's plugins are built into its binary: there are no installed plugins to clean up")
			return err
		},
	}
}

func newRepoUpdate(streams genericiooptions.IOStreams) *cobra.Command {
	var bucket, rootPath string
	cmd := &cobra.Command{
		Use:     "update REPOSITORY_NAME",
		Short:   "Accepted as tanzu's: slipway installs no plugins from a repository, so none is recorded",
		Example: "  slipway plugin repo update -b tanzu-cli-framework core",
		Args:    cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if bucket == "" && rootPath == "" {
				return fmt.Errorf("plugin repository %s: give --gcp-bucket-name (-b) or --gcp-root-path (-p), as tanzu plugin repo update takes", args[0])
			}
			_, err := fmt.Fprintf(streams.Out, "slipway's plugins are built into its binary: it reads no plugin repository, so %s (bucket %q, root path %q) is not recorded\n",
				args[0], bucket, rootPath)
			return err
		},
	}
	cmd.Flags().StringVarP(&bucket, "gcp-bucket-name", "b", "", "the repository's GCP bucket, as tanzu takes it")
	cmd.Flags().StringVarP(&rootPath, "gcp-root-path", "p", "", "the repository's root path in the bucket, as tanzu takes it")
	return cmd
}
