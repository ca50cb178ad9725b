// Package packages holds `slipway package`, the tanzu package plugin's verbs: repository,
// available and installed, with the same flags and columns.
package packages

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/slipway-dev/slipway/internal/cli/cliutil"
	pkgclient "github.com/slipway-dev/slipway/internal/client/packaging"
	"github.com/slipway-dev/slipway/internal/progress"
)

// globalFlags are the flags every verb takes.
type globalFlags struct {
	cliutil.KubeconfigFlags
	// pollInterval is how often a wait looks (--poll-interval).
	pollInterval time.Duration
}

func (g *globalFlags) client(streams genericiooptions.IOStreams) (*pkgclient.Client, error) {
	c, err := g.Client()
	if err != nil {
		return nil, err
	}
	return &pkgclient.Client{C: c, Progress: progress.ForWriter(streams.ErrOut), PollInterval: g.pollInterval}, nil
}

// runE is a verb's RunE that makes the packaging client, then runs run with it.
func (g *globalFlags) runE(streams genericiooptions.IOStreams, run func(cmd *cobra.Command, c *pkgclient.Client, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := g.client(streams)
		if err != nil {
			return err
		}
		return run(cmd, c, args)
	}
}

// addWaitTimeout adds --wait-timeout and its older name of the tanzu package plugin,
// --poll-timeout, both setting timeout.
func addWaitTimeout(cmd *cobra.Command, timeout *time.Duration) {
	cmd.Flags().DurationVar(timeout, "wait-timeout", defaultWaitTimeout, "how long to wait")
	cmd.Flags().DurationVar(timeout, "poll-timeout", defaultWaitTimeout, "how long to wait (the tanzu package plugin's name of --wait-timeout)")
}

// NewCommand returns `slipway package`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	g := &globalFlags{}
	cmd := &cobra.Command{
		Use:     "package",
		Aliases: []string{"packages"},
		Short:   "Manage package repositories and packages, as `tanzu package`",
	}
	g.AddPersistent(cmd)
	cmd.PersistentFlags().DurationVar(&g.pollInterval, "poll-interval", time.Second, "how often a wait looks at what it waits for")
	cmd.AddCommand(newRepositoryCommand(g, streams), newAvailableCommand(g, streams), newInstalledCommand(g, streams), newBundleCommand(streams))
	return cmd
}

// outputFlag is -o, as the tanzu package plugin's lists and gets take it.
type outputFlag struct{ format string }

func (o *outputFlag) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.format, "output", "o", "", "output format: "+cliutil.Formats)
}

// print prints rows as -o asks: the tanzu CLI's table, or a list of objects in JSON or YAML.
func (o *outputFlag) print(out io.Writer, headers []string, rows [][]string) error {
	return cliutil.Print(out, o.format, headers, rows)
}

// namespaceFlags are -n and -A.
type namespaceFlags struct {
	namespace string
	all       bool
}

func (n *namespaceFlags) add(cmd *cobra.Command, allowAll bool) {
	cmd.Flags().StringVarP(&n.namespace, "namespace", "n", "default", "the namespace")
	if allowAll {
		cmd.Flags().BoolVarP(&n.all, "all-namespaces", "A", false, "list across all namespaces")
	}
}

func (n *namespaceFlags) list() string {
	if n.all {
		return ""
	}
	return n.namespace
}

// listed is a row of a list: its cells, and the namespace of its object, which a list across
// every namespace (-A) prints as its last column.
type listed struct {
	namespace string
	cells     []string
}

// newListCommand returns a list verb of -n, -A and -o: it prints headers and a row for each
// object list finds in the namespace (in every namespace when it is empty).
func newListCommand(g *globalFlags, streams genericiooptions.IOStreams, short string, headers []string,
	list func(ctx context.Context, c *pkgclient.Client, namespace string) ([]listed, error)) *cobra.Command {
	ns := &namespaceFlags{}
	out := &outputFlag{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: g.runE(streams, func(cmd *cobra.Command, c *pkgclient.Client, _ []string) error {
			rows, err := list(cmd.Context(), c, ns.list())
			if err != nil {
				return err
			}
			return printListed(out, streams.Out, ns.all, headers, rows)
		}),
	}
	ns.add(cmd, true)
	out.add(cmd)
	return cmd
}

// printListed prints a list's rows, with a NAMESPACE column when it is across namespaces.
func printListed(out *outputFlag, w io.Writer, all bool, headers []string, rows []listed) error {
	cells := make([][]string, 0, len(rows))
	for _, r := range rows {
		if all {
			cells = append(cells, append(r.cells, r.namespace))
		} else {
			cells = append(cells, r.cells)
		}
	}
	if all {
		headers = append(headers, "NAMESPACE")
	}
	return out.print(w, headers, cells)
}

// newGetCommand returns a get verb of one name, -n and -o: it prints headers and the row get
// returns for the object.
func newGetCommand(g *globalFlags, streams genericiooptions.IOStreams, use, short string, headers []string,
	get func(ctx context.Context, c *pkgclient.Client, name, namespace string) ([]string, error)) *cobra.Command {
	ns := &namespaceFlags{}
	out := &outputFlag{}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: g.runE(streams, func(cmd *cobra.Command, c *pkgclient.Client, args []string) error {
			cells, err := get(cmd.Context(), c, args[0], ns.namespace)
			if err != nil {
				return err
			}
			return out.print(streams.Out, headers, [][]string{cells})
		}),
	}
	ns.add(cmd, false)
	out.add(cmd)
	return cmd
}

const defaultWaitTimeout = 5 * time.Minute

// newDeleteCommand returns a delete verb of what: one name, -n, -y and --wait-timeout; it asks
// first, as the tanzu CLI does, unless -y.
func newDeleteCommand(g *globalFlags, streams genericiooptions.IOStreams, use, short, what string,
	del func(c *pkgclient.Client, ctx context.Context, name, namespace string, timeout time.Duration) error) *cobra.Command {
	ns := &namespaceFlags{}
	var timeout time.Duration
	var yes bool
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: g.runE(streams, func(cmd *cobra.Command, c *pkgclient.Client, args []string) error {
			if !yes {
				if err := cliutil.Confirm(streams, fmt.Sprintf("Deleting %s '%s' in namespace '%s'. Are you sure?", what, args[0], ns.namespace)); err != nil {
					return err
				}
			}
			return del(c, cmd.Context(), args[0], ns.namespace, timeout)
		}),
	}
	ns.add(cmd, false)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	addWaitTimeout(cmd, &timeout)
	return cmd
}
