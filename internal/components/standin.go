package components

import (
	"context"
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/images"
)

// standIn runs in the images of add-on workloads that cannot be built on slipway's host (their
// image config is labelled simulated): it says in its log what it stands in for and that it is
// simulated, then waits for SIGTERM. It takes whatever arguments the workload's manifests pass.
func standIn() Component {
	return Component{Name: "stand-in", Run: runStandIn}
}

func runStandIn(ctx context.Context, args []string) error {
	of := os.Getenv(images.EnvStandsInFor)
	if of == "" {
		of = "an add-on workload"
	}
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprintf(os.Stderr, "This image is slipway's simulated stand-in for %s, which cannot be built on slipway's host.\n"+
				"It logs what it stands in for and runs until it is stopped; it ignores its arguments.\n", of)
			return flag.ErrHelp
		}
	}
	ctrl.LoggerFrom(ctx).Info("Simulated: slipway's stand-in for "+of+" runs in its place and does none of its work", "args", args)
	<-ctx.Done()
	return nil
}
