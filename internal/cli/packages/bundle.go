package packages

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/controllers/packaging/bundle"
)

// newBundleCommand returns `slipway package bundle push`, what `imgpkg push -b REF -f DIR` does.
func newBundleCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "bundle", Short: "Build and push imgpkg bundles"}
	var ref, dir string
	push := &cobra.Command{
		Use:     "push -b REFERENCE -f DIRECTORY",
		Short:   "Push a directory (with .imgpkg/images.yml) as an imgpkg bundle",
		Example: "  slipway package bundle push -b 127.0.0.1:5000/packages/metrics-server:0.6.4 -f packages/metrics-server/0.6.4/bundle",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if ref == "" || dir == "" {
				return fmt.Errorf("--bundle (-b) and --file (-f) are required")
			}
			pushed, err := bundle.Push(dir, ref)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(streams.Out, pushed)
			return err
		},
	}
	push.Flags().StringVarP(&ref, "bundle", "b", "", "the reference to push to")
	push.Flags().StringVarP(&dir, "file", "f", "", "the bundle's directory")
	cmd.AddCommand(push)
	return cmd
}
