package managementcluster

import (
	"fmt"
	"net"

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
	for _, flag := range []string{"file", "dry-run", "use-existing-bootstrap-cluster", "name", "plan", "cni"} {
		if cmd.Flags().Changed(flag) {
			return fmt.Errorf("--%s cannot go with --ui: the installer takes the configuration in the browser (import a file there)", flag)
		}
	}
	if err := ui.CheckBind(f.bind, f.bindRemote); err != nil {
		return err
	}
	l, err := net.Listen("tcp", f.bind)
	if err != nil {
		return fmt.Errorf("--bind %s: %w: choose another port", f.bind, err)
	}
	repository := ""
	if cmd.Flags().Changed("package-repository") {
		repository = f.packageRepository
	}
	srv, err := ui.New(cmd.Context(), l.Addr(), ui.Options{Home: home, Store: store, Log: streams.ErrOut,
		Base: managementcluster.CreateOptions{Kubeconfig: f.kubeconfig, Timeout: f.timeout, PackageRepository: repository}})
	if err != nil {
		l.Close()
		return err
	}
	url := srv.URL(l.Addr())
	fmt.Fprintf(streams.ErrOut, "Serving kickstart UI at %s\n", url)
	fmt.Fprintln(streams.ErrOut, "Only a page opened from this URL (it carries this run's token) can drive the installer. Ctrl-C stops it.")
	if err := cliutil.OpenBrowser(f.browser, url); err != nil {
		fmt.Fprintf(streams.ErrOut, "Open the URL in a browser: %v\n", err)
	}
	return srv.Serve(cmd.Context(), l)
}
