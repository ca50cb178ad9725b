package managementcluster

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	"github.com/slipway-dev/slipway/internal/client/managementcluster"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/ui"
)

// serveInstaller serves the installer UI until the command is interrupted: the wizard takes the
// configuration, and its deploys run the same flow as the command.
func serveInstaller(cmd *cobra.Command, streams genericiooptions.IOStreams, f *createFlags, home string, store localcluster.Store) error {
	for _, flag := range []string{"file", "dry-run", "use-existing-bootstrap-cluster", "name", "plan", "cni", "yes", "deploy-tkg-on-vSphere7", "verbose", "log-file"} {
		if cmd.Flags().Changed(flag) {
			return fmt.Errorf("--%s cannot go with --ui: the installer takes the configuration in the browser (import a file there), "+
				"asks there what the command would ask, and writes each deploy's log under the home's logs/", flag)
		}
	}
	repository := ""
	if cmd.Flags().Changed("package-repository") {
		repository = f.packageRepository
	}
	return ui.Run(cmd.Context(), f.bind, f.bindRemote, ui.Options{Home: home, Store: store, Log: streams.ErrOut,
		Base: managementcluster.CreateOptions{Environ: os.Environ(), Kubeconfig: f.kubeconfig, Timeout: f.timeout, PackageRepository: repository}},
		cliutil.AnnounceInstaller(streams.ErrOut, "kickstart UI", f.browser))
}
