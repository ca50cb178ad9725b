package packages

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	pkgclient "github.com/slipway-dev/slipway/internal/client/packaging"
)

func newRepositoryCommand(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "repository", Aliases: []string{"repo"}, Short: "Add, update, list, get and delete package repositories"}
	cmd.AddCommand(newRepositoryAdd(g, streams, false), newRepositoryAdd(g, streams, true), newRepositoryList(g, streams), newRepositoryGet(g, streams),
		newRepositoryDelete(g, streams))
	return cmd
}

// newRepositoryAdd returns `repository add` or, with update, `repository update`, which refuses a
// repository that does not exist.
func newRepositoryAdd(g *globalFlags, streams genericiooptions.IOStreams, update bool) *cobra.Command {
	o := pkgclient.RepositoryOptions{Update: update}
	ns := &namespaceFlags{}
	use, short, example := "add REPOSITORY_NAME --url REPOSITORY_URL", "Add a package repository",
		"  slipway package repository add tanzu-standard --url projects.registry.vmware.com/tkg/packages/standard/repo:v2.2.0 -n tanzu-package-repo-global"
	if update {
		use, short, example = "update REPOSITORY_NAME --url REPOSITORY_URL", "Update a package repository's bundle",
			"  slipway package repository update tanzu-standard --url projects.registry.vmware.com/tkg/packages/standard/repo:v2.2.1 -n tanzu-package-repo-global"
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    cobra.ExactArgs(1),
		RunE: g.runE(streams, func(cmd *cobra.Command, c *pkgclient.Client, args []string) error {
			o.Name, o.Namespace = args[0], ns.namespace
			return cliutil.FlagError(c.RepositoryAdd(cmd.Context(), o), map[string]string{"url": "--url"})
		}),
	}
	ns.add(cmd, false)
	cmd.Flags().StringVar(&o.URL, "url", "", "the imgpkg bundle of the repository")
	if !update {
		cmd.Flags().BoolVar(&o.CreateNamespace, "create-namespace", false, "create the namespace if it is missing")
	}
	cmd.Flags().BoolVar(&o.Wait, "wait", true, "wait for the repository to reconcile")
	addWaitTimeout(cmd, &o.WaitTimeout)
	return cmd
}

func newRepositoryList(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newListCommand(g, streams, "List package repositories", []string{"NAME", "REPOSITORY", "TAG", "STATUS", "DETAILS"},
		func(ctx context.Context, c *pkgclient.Client, namespace string) ([]listed, error) {
			repos, err := c.RepositoryList(ctx, namespace)
			var rows []listed
			for _, r := range repos {
				rows = append(rows, listed{r.Namespace, []string{r.Name, r.Repository, r.Tag, r.Status, r.Details}})
			}
			return rows, err
		})
}

func newRepositoryGet(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newGetCommand(g, streams, "get REPOSITORY_NAME", "Get a package repository", []string{"NAME", "REPOSITORY", "TAG", "STATUS", "DETAILS"},
		func(ctx context.Context, c *pkgclient.Client, name, namespace string) ([]string, error) {
			r, err := c.RepositoryGet(ctx, name, namespace)
			if err != nil {
				return nil, err
			}
			return []string{r.Name, r.Repository, r.Tag, r.Status, r.Details}, nil
		})
}

func newRepositoryDelete(g *globalFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newDeleteCommand(g, streams, "delete REPOSITORY_NAME", "Delete a package repository and the packages it made available", "package repository", (*pkgclient.Client).RepositoryDelete)
}
