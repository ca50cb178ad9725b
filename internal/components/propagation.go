package components

import (
	"context"
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/controllers/propagation"
)

// objectPropagation is TKG's object-propagation-controller-manager (image
// object-propagation-controller): it copies the objects its --input configuration names from
// their source namespace into the namespaces the configuration picks.
func objectPropagation() Component {
	return Component{Name: "object-propagation-controller", Run: runObjectPropagation}
}

func runObjectPropagation(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("object-propagation-controller", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":18321")
	input := flags.String("input", "/dev/stdin", "file of the propagation configuration: a YAML list of source/target entries")
	if err := flags.Parse(args); err != nil {
		return err
	}
	data, err := os.ReadFile(*input)
	if err != nil {
		return fmt.Errorf("failed to read --input: %w", err)
	}
	entries, err := propagation.Parse(data)
	if err != nil {
		return fmt.Errorf("--input %s: %w", *input, err)
	}
	return runManager(ctx, mf, false, func(mgr ctrl.Manager) error {
		return propagation.SetupWithManager(mgr, entries)
	})
}
