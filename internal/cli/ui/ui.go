// Package ui is `slipway ui`: the installer UI pointed at a management cluster.
package ui

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	"github.com/slipway-dev/slipway/internal/statedir"
	slipwayui "github.com/slipway-dev/slipway/internal/ui"
)

// NewCommand returns `slipway ui`: the installer's server pointed at a management cluster,
// listing its workload clusters and creating one through the wizard.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	k := &cliutil.KubeconfigFlags{}
	var (
		bind, browser string
		bindRemote    bool
		timeout       time.Duration
	)
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the installer UI for a management cluster: its workload clusters, and a wizard that creates one",
		Long: "Serve, on loopback, the installer's wizard pointed at a management cluster (its admin context, or\n" +
			"--kubeconfig and --context): it lists the workload clusters with their status, release, add-on packages\n" +
			"and the workloads the local runtime simulates, and creates one from a flat configuration checked field\nby field, as `slipway cluster create -f`.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := k.ManagementClient(streams.ErrOut)
			if err != nil {
				return err
			}
			home, err := statedir.Path()
			if err != nil {
				return err
			}
			standIns, err := cliutil.StandInDigests()
			if err != nil {
				fmt.Fprintf(streams.ErrOut, "Warning: %v: a stand-in image copied into one repository is not shown as simulated\n", err)
			}
			return slipwayui.Run(cmd.Context(), bind, bindRemote, slipwayui.Options{Home: home, Log: streams.ErrOut,
				Workload: &slipwayui.Workload{Client: c, CheckHost: cliutil.CheckHost, Timeout: timeout, Environ: os.Environ(), StandIns: standIns}},
				cliutil.AnnounceInstaller(streams.ErrOut, "the installer UI", browser))
		},
	}
	k.AddPersistent(cmd)
	cmd.Flags().StringVarP(&bind, "bind", "b", "127.0.0.1:8080", "the address the installer serves on (a loopback address, unless --bind-remote)")
	cmd.Flags().BoolVar(&bindRemote, "bind-remote", false, "let --bind be an address beyond this host, where the printed token is the installer's only guard")
	cmd.Flags().StringVar(&browser, "browser", "", "the browser command that opens the installer; 'none' opens none (default: the desktop's, xdg-open)")
	cmd.Flags().DurationVarP(&timeout, "timeout", "t", 30*time.Minute, "how long each wait of a deploy may take")
	return cmd
}
