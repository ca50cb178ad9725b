package packages

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	pkgclient "github.com/slipway-dev/slipway/internal/client/packaging"
)

func newAvailableCommand(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "available", Short: "List and get the packages available to install"}
	cmd.AddCommand(newAvailableList(g, streams), newAvailableGet(g, streams))
	return cmd
}

func newAvailableList(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	ns := &namespaceFlags{}
	out := &outputFlag{}
	cmd := &cobra.Command{
		Use:   "list [PACKAGE_NAME]",
		Short: "List available packages, or the versions of one",
		Args:  cobra.MaximumNArgs(1),
		RunE: g.runE(streams, func(cmd *cobra.Command, c *pkgclient.Client, args []string) error {
			if len(args) == 1 {
				versions, err := c.AvailableVersions(cmd.Context(), args[0], ns.list())
				if err != nil {
					return err
				}
				var rows []listed
				for _, v := range versions {
					rows = append(rows, listed{v.Namespace, []string{v.Name, v.Version, v.ReleasedAt}})
				}
				return printListed(out, streams.Out, ns.all, []string{"NAME", "VERSION", "RELEASED-AT"}, rows)
			}
			pkgs, err := c.AvailableList(cmd.Context(), ns.list())
			if err != nil {
				return err
			}
			var rows []listed
			for _, p := range pkgs {
				rows = append(rows, listed{p.Namespace, []string{p.Name, p.DisplayName, p.ShortDescription, p.LatestVersion}})
			}
			return printListed(out, streams.Out, ns.all, []string{"NAME", "DISPLAY-NAME", "SHORT-DESCRIPTION", "LATEST-VERSION"}, rows)
		}),
	}
	ns.add(cmd, true)
	out.add(cmd)
	return cmd
}

func newAvailableGet(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	ns := &namespaceFlags{}
	out := &outputFlag{}
	var valuesSchema, defaultValuesFile bool
	cmd := &cobra.Command{
		Use:   "get PACKAGE_NAME[/VERSION]",
		Short: "Get a package, or its values schema",
		Args:  cobra.ExactArgs(1),
		RunE: g.runE(streams, func(cmd *cobra.Command, c *pkgclient.Client, args []string) error {
			p, err := c.AvailableGet(cmd.Context(), args[0], ns.namespace)
			if err != nil {
				return err
			}
			if defaultValuesFile {
				data, err := pkgclient.DefaultValues(p)
				if err != nil {
					return err
				}
				path := fmt.Sprintf("%s-%s-default-values.yaml", p.Spec.RefName, p.Spec.Version)
				if err := os.WriteFile(path, data, 0o600); err != nil {
					return err
				}
				_, err = fmt.Fprintf(streams.Out, "Created default values file at %s\n", path)
				return err
			}
			if valuesSchema {
				rows, err := pkgclient.ValuesSchema(p)
				if err != nil {
					return err
				}
				var cells [][]string
				for _, r := range rows {
					cells = append(cells, []string{r.Key, r.Default, r.Type, r.Description})
				}
				return out.print(streams.Out, []string{"KEY", "DEFAULT", "TYPE", "DESCRIPTION"}, cells)
			}
			if out.format != "" && out.format != "table" {
				return out.print(streams.Out, []string{"NAME", "VERSION", "RELEASED-AT", "RELEASE-NOTES", "LICENSE"},
					[][]string{{p.Spec.RefName, p.Spec.Version, p.Spec.ReleasedAt.String(), p.Spec.ReleaseNotes, strings.Join(p.Spec.Licenses, ", ")}})
			}
			_, err = fmt.Fprintf(streams.Out, "NAME:\t%s\nVERSION:\t%s\nRELEASED-AT:\t%s\nRELEASE-NOTES:\t%s\nLICENSE:\t%v\n",
				p.Spec.RefName, p.Spec.Version, p.Spec.ReleasedAt, p.Spec.ReleaseNotes, p.Spec.Licenses)
			return err
		}),
	}
	ns.add(cmd, false)
	out.add(cmd)
	cmd.Flags().BoolVar(&valuesSchema, "values-schema", false, "show the values schema of the package")
	cmd.Flags().BoolVar(&defaultValuesFile, "generate-default-values-file", false,
		"write the package's values with their defaults to PACKAGE-VERSION-default-values.yaml here, to edit and pass to --values-file")
	return cmd
}
