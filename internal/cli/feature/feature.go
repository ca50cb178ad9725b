// Package feature holds `slipway feature`, the tanzu feature plugin's verbs: list, activate and
// deactivate, over the Feature and FeatureGate API the management cluster serves.
package feature

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	featureclient "github.com/slipway-dev/slipway/internal/client/feature"
)

// NewCommand returns `slipway feature`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	k := &cliutil.KubeconfigFlags{}
	cmd := &cobra.Command{
		Use:   "feature",
		Short: "Operate on Features and FeatureGates, as `tanzu feature`",
	}
	k.AddPersistent(cmd)
	cmd.AddCommand(newList(k, streams), newSet(k, streams, true), newSet(k, streams, false))
	return cmd
}

func newList(k *cliutil.KubeconfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var (
		o        featureclient.ListOptions
		extended bool
		output   string
	)
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the Features of the cluster, with the FeatureGate of each",
		Example: "  slipway feature list --activated\n  slipway feature list -x -e",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := k.Client()
			if err != nil {
				return err
			}
			infos, err := featureclient.List(cmd.Context(), c, o)
			if err != nil {
				return err
			}
			headers := []string{"NAME", "ACTIVATION STATE", "FEATUREGATE"}
			if extended {
				headers = []string{"NAME", "ACTIVATION STATE", "STABILITY", "DESCRIPTION", "IMMUTABLE", "FEATUREGATE"}
			}
			var rows [][]string
			for _, i := range infos {
				if extended {
					rows = append(rows, []string{i.Name, strconv.FormatBool(i.Activated), string(i.Stability), i.Description, strconv.FormatBool(i.Immutable), i.Gate})
				} else {
					rows = append(rows, []string{i.Name, strconv.FormatBool(i.Activated), i.Gate})
				}
			}
			return cliutil.Print(streams.Out, output, headers, rows)
		},
	}
	cmd.Flags().BoolVarP(&extended, "extended", "e", false, "add each Feature's stability, description and immutability")
	cmd.Flags().StringVarP(&o.Gate, "featuregate", "f", "", "list the Features of this FeatureGate only")
	cmd.Flags().BoolVarP(&o.Activated, "activated", "a", false, "list activated Features only")
	cmd.Flags().BoolVarP(&o.Deactivated, "deactivated", "d", false, "list deactivated Features only")
	cmd.Flags().BoolVarP(&o.Experimental, "include-experimental", "x", false, "list Experimental Features too")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: "+cliutil.Formats)
	return cmd
}

// newSet returns `activate` or `deactivate`.
func newSet(k *cliutil.KubeconfigFlags, streams genericiooptions.IOStreams, activate bool) *cobra.Command {
	o := featureclient.SetOptions{Activate: activate}
	verb, done := "deactivate", "Deactivated"
	if activate {
		verb, done = "activate", "Activated"
	}
	cmd := &cobra.Command{
		Use:     verb + " FEATURE",
		Short:   "Mark a Feature " + verb + "d in its FeatureGate",
		Example: "  slipway feature " + verb + " myfeature",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := k.Client()
			if err != nil {
				return err
			}
			o.Name = args[0]
			if err := featureclient.SetActivation(cmd.Context(), c, o); err != nil {
				return fmt.Errorf("couldn't %s feature %s: %w", verb, o.Name, err)
			}
			_, err = fmt.Fprintf(streams.Out, "Feature %s %s\n", o.Name, done)
			return err
		},
	}
	cmd.Flags().StringVarP(&o.Gate, "featuregate", "f", featureclient.DefaultGate, "the FeatureGate that gates the Feature")
	cmd.Flags().BoolVar(&o.VoidWarranty, "permanentlyVoidAllSupportGuarantees", false,
		"accept that toggling an Experimental or Work In Progress Feature voids all support guarantees of this environment")
	return cmd
}
