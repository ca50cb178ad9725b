// Package kubernetesrelease holds `slipway kubernetes-release`, the tanzu kubernetes-release
// plugin's verbs: get, activate, deactivate, available-upgrades get and os get.
package kubernetesrelease

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	tkrclient "github.com/slipway-dev/slipway/internal/client/tkr"
)

// NewCommand returns `slipway kubernetes-release`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	k := &cliutil.KubeconfigFlags{}
	cmd := &cobra.Command{
		Use:     "kubernetes-release",
		Aliases: []string{"kr"},
		Short:   "List and manage Tanzu Kubernetes releases, as `tanzu kubernetes-release`",
	}
	k.AddPersistent(cmd)
	cmd.AddCommand(newGet(k, streams), newSetActive(k, streams, true), newSetActive(k, streams, false),
		newAvailableUpgrades(k, streams), newOS(k, streams))
	return cmd
}

func newGet(k *cliutil.KubeconfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var all bool
	var output string
	cmd := &cobra.Command{
		Use:   "get [TKR_NAME]",
		Short: "List the compatible, active releases (-a: all)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := k.Client()
			if err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			releases, err := tkrclient.List(cmd.Context(), c, name)
			if err != nil {
				return err
			}
			var rows [][]string
			for _, r := range releases {
				if !all && name == "" && !r.Usable() {
					continue
				}
				rows = append(rows, []string{r.Name, r.Version, r.Compatible, strconv.FormatBool(r.Active)})
			}
			return cliutil.Print(streams.Out, output, []string{"NAME", "VERSION", "COMPATIBLE", "ACTIVE"}, titleBools(rows, 3))
		},
	}
	cmd.Flags().BoolVarP(&all, "all", "a", false, "list incompatible and deactivated releases too")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: "+cliutil.Formats)
	return cmd
}

// titleBools writes the boolean column as the tanzu CLI does: True, False.
func titleBools(rows [][]string, col int) [][]string {
	for _, r := range rows {
		switch r[col] {
		case "true":
			r[col] = "True"
		case "false":
			r[col] = "False"
		}
	}
	return rows
}

func newSetActive(k *cliutil.KubeconfigFlags, streams genericiooptions.IOStreams, active bool) *cobra.Command {
	verb, short := "activate", "Activate releases, so that clusters may use them"
	if !active {
		verb, short = "deactivate", "Deactivate releases: the resolver no longer picks them for new clusters or upgrades"
	}
	return &cobra.Command{
		Use:   verb + " TKR_NAME...",
		Short: short,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := k.Client()
			if err != nil {
				return err
			}
			if err := tkrclient.SetActive(cmd.Context(), c, args, active); err != nil {
				return err
			}
			for _, n := range args {
				fmt.Fprintf(streams.Out, "%sd TanzuKubernetesRelease %s\n", verb, n)
			}
			return nil
		},
	}
}

func newAvailableUpgrades(k *cliutil.KubeconfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var namespace, output string
	var ofCluster bool
	get := &cobra.Command{
		Use:   "get TKR_NAME",
		Short: "List the releases a release can be upgraded to",
		Long: "List the releases a cluster on release TKR_NAME can be upgraded to: compatible and active, newer, within its minor version and the next, as TKG lists them.\n\n" +
			"With --cluster, TKR_NAME is instead a cluster's name, and the list is the one its UpdatesAvailable condition holds (slipway's addition).",
		Example: "  slipway kubernetes-release available-upgrades get v1.34.3---vmware.1-tkg.1\n" +
			"  slipway kubernetes-release available-upgrades get wc --cluster -n default",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := k.Client()
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("namespace") && !ofCluster {
				return fmt.Errorf("-n names a cluster's namespace: add --cluster to list a cluster's upgrades, or drop -n for a release's")
			}
			var releases []tkrclient.Release
			what := "release " + args[0]
			if ofCluster {
				releases, err = tkrclient.AvailableUpgrades(cmd.Context(), c, namespace, args[0])
				what = "cluster " + namespace + "/" + args[0]
			} else if releases, err = tkrclient.ReleaseUpgrades(cmd.Context(), c, args[0]); err != nil {
				err = fmt.Errorf("%w; or, if %s names a cluster, add --cluster", err, args[0])
			}
			if err != nil {
				return err
			}
			if len(releases) == 0 && (output == "" || output == "table") {
				fmt.Fprintf(streams.Out, "There are no available upgrades for %s\n", what)
				return nil
			}
			var rows [][]string
			for _, r := range releases {
				rows = append(rows, []string{r.Name, r.Version})
			}
			return cliutil.Print(streams.Out, output, []string{"NAME", "VERSION"}, rows)
		},
	}
	get.Flags().BoolVar(&ofCluster, "cluster", false, "the argument names a cluster, not a release")
	get.Flags().StringVarP(&namespace, "namespace", "n", "default", "with --cluster: the cluster's namespace")
	get.Flags().StringVarP(&output, "output", "o", "", "output format: "+cliutil.Formats)
	cmd := &cobra.Command{Use: "available-upgrades", Aliases: []string{"au"}, Short: "The releases a cluster can be upgraded to"}
	cmd.AddCommand(get)
	return cmd
}

func newOS(k *cliutil.KubeconfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var output string
	get := &cobra.Command{
		Use:   "get TKR_NAME",
		Short: "List the OS images of a release",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := k.Client()
			if err != nil {
				return err
			}
			images, err := tkrclient.OSImages(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			var rows [][]string
			for _, o := range images {
				rows = append(rows, []string{o.OSName, o.OSVersion, o.Arch, o.ImageType, o.Name})
			}
			return cliutil.Print(streams.Out, output, []string{"NAME", "VERSION", "ARCH", "IMAGE-TYPE", "OSIMAGE"}, rows)
		},
	}
	get.Flags().StringVarP(&output, "output", "o", "", "output format: "+cliutil.Formats)
	cmd := &cobra.Command{Use: "os", Short: "The OS images of releases"}
	cmd.AddCommand(get)
	return cmd
}
