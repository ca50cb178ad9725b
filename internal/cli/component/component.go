// Package component holds `slipway component run NAME -- ARGS`, the entry point of slipway's
// in-cluster components, which a component image runs in its container.
package component

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/slipway-dev/slipway/internal/components"
	"github.com/slipway-dev/slipway/internal/images"
)

// ImageArgs returns the arguments that run the component a slipway image names, when this binary
// runs as the image's /manager with images.EnvComponent set (`command: [/manager]` or the image's
// entrypoint), and nil otherwise.
func ImageArgs(args []string) []string {
	name := os.Getenv(images.EnvComponent)
	if name == "" || len(args) == 0 || filepath.Base(args[0]) != "manager" {
		return nil
	}
	return append([]string{"component", "run", name, "--"}, args[1:]...)
}

// NewCommand returns `slipway component`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	registry := components.Default()
	cmd := &cobra.Command{Use: "component", Short: "Run slipway's in-cluster components"}
	run := &cobra.Command{
		Use:   "run NAME [-- ARGS...]",
		Short: "Run a component with the container's arguments",
		Long:  "Runs a component until SIGTERM. Components: " + strings.Join(registry.Names(), ", ") + ".",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			c, err := registry.Get(args[0])
			if err != nil {
				return err
			}
			ctrl.SetLogger(zap.New())
			ctx := ctrl.SetupSignalHandler()
			if err := c.Run(ctx, args[1:]); err != nil {
				if errors.Is(err, flag.ErrHelp) || errors.Is(err, pflag.ErrHelp) {
					// The component printed its usage, as asked.
					return nil
				}
				return fmt.Errorf("component %s: %w", c.Name, err)
			}
			return nil
		},
	}
	cmd.AddCommand(run)
	_ = streams
	return cmd
}
