package cluster

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
)

func newListCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"get"},
		Short:   "List local clusters and whether their processes run",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			store, err := localcluster.DefaultStore()
			if err != nil {
				return err
			}
			specs, err := store.List()
			if err != nil {
				return err
			}
			if len(specs) == 0 {
				_, err := fmt.Fprintln(streams.ErrOut, "No local clusters found.")
				return err
			}
			w := tabwriter.NewWriter(streams.Out, 0, 4, 3, ' ', 0)
			fmt.Fprintln(w, "NAME\tKUBERNETES\tCONTROL PLANE\tWORKERS\tENDPOINT\tSTATUS")
			for _, spec := range specs {
				st := store.Inspect(spec)
				fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\n", spec.Name, spec.KubernetesVersion, len(spec.ControlPlane()),
					len(spec.Nodes)-len(spec.ControlPlane()), spec.Endpoint(), st.Status())
			}
			return w.Flush()
		},
	}
}
