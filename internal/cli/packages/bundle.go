package packages

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/components"
	"github.com/slipway-dev/slipway/internal/controllers/packaging/bundle"
)

// Labels of a placeholder image: what the local runtime does in the image's place.
const (
	labelRunsAs    = "local.slipway.dev/runs-as"
	labelSimulated = "local.slipway.dev/simulated"
)

// placeholderLabels says what the local runtime does for an image: run one of slipway's
// components as a process, or simulate the workload.
func placeholderLabels(image string) map[string]string {
	if component, ok := components.Default().ComponentFor(image); ok {
		return map[string]string{labelRunsAs: "component " + component}
	}
	return map[string]string{labelSimulated: "true"}
}

// newBundleCommand returns `slipway package bundle push`, what `imgpkg push -b REF -f DIR` does.
func newBundleCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "bundle", Short: "Build and push imgpkg bundles"}
	var ref, dir string
	var placeholders bool
	push := &cobra.Command{
		Use:     "push -b REFERENCE -f DIRECTORY",
		Short:   "Push a directory (with .imgpkg/images.yml) as an imgpkg bundle",
		Example: "  slipway package bundle push -b 127.0.0.1:5000/packages/metrics-server:0.6.4 -f packages/metrics-server/0.6.4/bundle",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if ref == "" || dir == "" {
				return fmt.Errorf("--bundle (-b) and --file (-f) are required")
			}
			push := bundle.Push
			if placeholders {
				push = func(dir, ref string) (string, error) { return bundle.PushWithPlaceholders(dir, ref, placeholderLabels) }
			}
			pushed, err := push(dir, ref)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(streams.Out, pushed)
			return err
		},
	}
	push.Flags().StringVarP(&ref, "bundle", "b", "", "the reference to push to")
	push.Flags().StringVarP(&dir, "file", "f", "", "the bundle's directory")
	push.Flags().BoolVar(&placeholders, "placeholder-images", false,
		"push a small placeholder image beside the bundle for each image its lock names by tag, and lock it by digest, so that imgpkg can copy the bundle "+
			"(the local runtime runs or simulates those workloads; it pulls no image)")
	cmd.AddCommand(push)
	return cmd
}
