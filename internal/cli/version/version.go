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
		Short: "Print slipway's version and the Kubernetes versions it runs",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(streams.Out, "version: %s\nkubernetes versions: %s\netcd version: %s\n",
				slipwayversion.Get(), strings.Join(assets.KubernetesVersions, ", "), assets.EtcdVersion)
			return err
		},
	}
}
