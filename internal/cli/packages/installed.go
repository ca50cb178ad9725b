package packages

import (
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
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client(streams)
			if err != nil {
				return err
			}
			o.Name, o.Namespace = args[0], ns.namespace
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
		},
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
	ns := &namespaceFlags{}
	out := &outputFlag{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List installed packages",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client(streams)
			if err != nil {
				return err
			}
			installed, err := c.InstalledList(cmd.Context(), ns.list())
			if err != nil {
				return err
			}
			var rows [][]string
			for _, i := range installed {
				rows = append(rows, row(ns.all, i.Namespace, i.Name, i.PackageName, i.PackageVersion, i.Status))
			}
			return out.print(streams.Out, withNamespace([]string{"NAME", "PACKAGE-NAME", "PACKAGE-VERSION", "STATUS"}, ns.all), rows)
		},
	}
	ns.add(cmd, true)
	out.add(cmd)
	return cmd
}

func newInstalledGet(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	ns := &namespaceFlags{}
	out := &outputFlag{}
	cmd := &cobra.Command{
		Use:   "get INSTALLED_PACKAGE_NAME",
		Short: "Get an installed package",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client(streams)
			if err != nil {
				return err
			}
			r, pi, err := c.InstalledGet(cmd.Context(), args[0], ns.namespace)
			if err != nil {
				return err
			}
			return out.print(streams.Out, []string{"NAME", "PACKAGE-NAME", "PACKAGE-VERSION", "STATUS", "CONDITIONS", "USEFUL-ERROR-MESSAGE"},
				[][]string{{r.Name, r.PackageName, r.PackageVersion, r.Status, conditions(pi.Status.Conditions), pi.Status.UsefulErrorMessage}})
		},
	}
	ns.add(cmd, false)
	out.add(cmd)
	return cmd
}

func newInstalledDelete(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newDeleteCommand(g, streams, "delete INSTALLED_PACKAGE_NAME", "Uninstall a package", "installed package", (*pkgclient.Client).InstalledDelete)
}
