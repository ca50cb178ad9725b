package packages

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
	"github.com/slipway-dev/slipway/internal/images"
)

// lockBuilt returns the function that pushes an image of the OCI layout dir (`make images`)
// beside a bundle and locks it by digest.
func lockBuilt(ctx context.Context, dir string) (bundle.LockImage, error) {
	built, err := images.ReadLayout(dir)
	if err != nil {
		return nil, err
	}
	byRef := map[string]images.Built{}
	for _, b := range built {
		byRef[b.Ref] = b
	}
	return func(ref, registry string) (string, error) {
		b, ok := byRef[ref]
		if !ok {
			return "", fmt.Errorf("image %s is not among the images built in %s: add it to hack/images/images.go and run `make images`", ref, dir)
		}
		locked, _, err := images.Push(ctx, registry, b)
		return locked.String(), err
	}, nil
}

// newBundleCommand returns `slipway package bundle push`, what `imgpkg push -b REF -f DIR` does.
func newBundleCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "bundle", Short: "Build and push imgpkg bundles"}
	var ref, dir string
	var imagesDir string
	push := &cobra.Command{
		Use:     "push -b REFERENCE -f DIRECTORY",
		Short:   "Push a directory (with .imgpkg/images.yml) as an imgpkg bundle",
		Example: "  slipway package bundle push -b 127.0.0.1:5000/packages/metrics-server:0.6.4 -f packages/metrics-server/0.6.4/bundle",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ref == "" || dir == "" {
				return fmt.Errorf("--bundle (-b) and --file (-f) are required")
			}
			push := bundle.Push
			if imagesDir != "" {
				lock, err := lockBuilt(cmd.Context(), imagesDir)
				if err != nil {
					return err
				}
				push = func(dir, ref string) (string, error) { return bundle.PushLocking(dir, ref, lock) }
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
	push.Flags().StringVar(&imagesDir, "images", "",
		"an OCI image layout (`make images` writes bin/images/layout): each image the bundle's lock names by tag is pushed from it beside the bundle "+
			"(REGISTRY/<its repository path>:<tag>) and locked by digest, so that imgpkg copies it with the bundle")
	cmd.AddCommand(push)
	return cmd
}
