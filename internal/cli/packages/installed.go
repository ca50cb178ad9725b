package packages

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	pkgclient "github.com/slipway-dev/slipway/internal/client/packaging"
)

func newInstalledCommand(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "installed", Short: "Install, update, list, get and uninstall packages"}
	cmd.AddCommand(newInstalledCreate(g, streams, false), newInstalledCreate(g, streams, true),
		newInstalledList(g, streams), newInstalledGet(g, streams), newInstalledDelete(g, streams))
	return cmd
}

// newInstalledCreate returns `create` or, with update, `update`: they share their flags.
func newInstalledCreate(g *globalFlags, streams genericiooptions.IOStreams, update bool) *cobra.Command {
	o := pkgclient.InstallOptions{}
	var valuesFile string
	ns := &namespaceFlags{}
	use, short := "create INSTALLED_PACKAGE_NAME --package PACKAGE_NAME --version VERSION", "Install a package"
	if update {
		use, short = "update INSTALLED_PACKAGE_NAME [--version VERSION] [--values-file FILE]", "Update an installed package's version or values"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: g.runE(streams, func(cmd *cobra.Command, c *pkgclient.Client, args []string) error {
			o.Name, o.Namespace = args[0], ns.namespace
			var err error
			if valuesFile != "" {
				if o.Values, err = os.ReadFile(valuesFile); err != nil {
					return fmt.Errorf("--values-file: %w", err)
				}
			}
			if update {
				err = c.InstalledUpdate(cmd.Context(), o)
			} else {
				err = c.InstalledCreate(cmd.Context(), o)
			}
			return cliutil.FlagError(err, map[string]string{"packageName": "--package", "version": "--version"})
		}),
	}
	ns.add(cmd, false)
	cmd.Flags().StringVarP(&o.PackageName, "package", "p", "", "the package's refName")
	cmd.Flags().StringVarP(&o.Version, "version", "v", "", "the version, or a semver constraint")
	cmd.Flags().StringVarP(&valuesFile, "values-file", "f", "", "a YAML file of values")
	cmd.Flags().BoolVar(&o.Wait, "wait", true, "wait for the install to reconcile")
	addWaitTimeout(cmd, &o.WaitTimeout)
	if update {
		cmd.Flags().BoolVar(&o.Install, "install", false, "install the package when it is not installed (with --package and --version)")
	} else {
		cmd.Flags().StringVar(&o.ServiceAccountName, "service-account-name", "", "install with this service account instead of creating one")
		cmd.Flags().BoolVar(&o.CreateNamespace, "create-namespace", false, "create the namespace if it is missing")
	}
	return cmd
}

func newInstalledList(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newListCommand(g, streams, "List installed packages", []string{"NAME", "PACKAGE-NAME", "PACKAGE-VERSION", "STATUS"},
		func(ctx context.Context, c *pkgclient.Client, namespace string) ([]listed, error) {
			installed, err := c.InstalledList(ctx, namespace)
			var rows []listed
			for _, i := range installed {
				rows = append(rows, listed{i.Namespace, []string{i.Name, i.PackageName, i.PackageVersion, i.Status}})
			}
			return rows, err
		})
}

func newInstalledGet(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newGetCommand(g, streams, "get INSTALLED_PACKAGE_NAME", "Get an installed package",
		[]string{"NAME", "PACKAGE-NAME", "PACKAGE-VERSION", "STATUS", "CONDITIONS", "USEFUL-ERROR-MESSAGE"},
		func(ctx context.Context, c *pkgclient.Client, name, namespace string) ([]string, error) {
			r, pi, err := c.InstalledGet(ctx, name, namespace)
			if err != nil {
				return nil, err
			}
			return []string{r.Name, r.PackageName, r.PackageVersion, r.Status, conditions(pi.Status.Conditions), pi.Status.UsefulErrorMessage}, nil
		})
}

func newInstalledDelete(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newDeleteCommand(g, streams, "delete INSTALLED_PACKAGE_NAME", "Uninstall a package", "installed package", (*pkgclient.Client).InstalledDelete)
}
