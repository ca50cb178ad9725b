// Package cliutil holds what every noun of the CLI shares: the kubeconfig flags, the tanzu
// CLI's table, JSON and YAML output, the host check of the local provider, and the start and
// stop verbs of slipway's background daemons.
package cliutil

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/assets"
	slipwayclient "github.com/slipway-dev/slipway/internal/client"
	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/client/managementcluster"
	"github.com/slipway-dev/slipway/internal/config"
	"github.com/slipway-dev/slipway/internal/images"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/statedir"
)

// KubeconfigFlags are --kubeconfig and --context.
type KubeconfigFlags struct {
	Kubeconfig, Context string
}

// AddPersistent adds the flags to cmd and its subcommands.
func (k *KubeconfigFlags) AddPersistent(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&k.Kubeconfig, "kubeconfig", "", "the kubeconfig file (default $KUBECONFIG or ~/.kube/config)")
	cmd.PersistentFlags().StringVar(&k.Context, "context", "", "the kubeconfig context")
}

// Client returns a client of the cluster the flags name, with slipway's scheme.
func (k *KubeconfigFlags) Client() (client.Client, error) {
	c, err := slipwayclient.New(k.Kubeconfig, k.Context)
	if err != nil {
		return nil, fmt.Errorf("%w (--kubeconfig, --context)", err)
	}
	return c, nil
}

// ManagementClient returns a client of the management cluster the flags name; without --context,
// of the current management cluster, as the tanzu CLI's current server: the one this host
// created, of several the one of the kubeconfig's current context, else the last created, which
// it then names on errOut.
func (k *KubeconfigFlags) ManagementClient(errOut io.Writer) (client.Client, error) {
	if k.Context == "" {
		home, err := statedir.Path()
		if err != nil {
			return nil, err
		}
		name, guessed, err := managementcluster.Current(home, k.Kubeconfig)
		if err != nil {
			return nil, err
		}
		if guessed {
			fmt.Fprintf(errOut, "Using management cluster %s, the last created (choose another with --context NAME-admin@NAME)\n", name)
		}
		if name != "" {
			k.Context = managementcluster.ContextName(name)
		}
	}
	return k.Client()
}

// CheckHost checks that this host can start a number of the local provider's nodes, as the
// provider does again before it starts each; its warnings go to p.
func CheckHost(p *progress.Printer, controlPlanes, workers int) error {
	store, err := localcluster.DefaultStore()
	if err != nil {
		return err
	}
	return store.CheckHostLimits(controlPlanes, workers, func(msg string) { p.Infof("%s", msg) })
}

// Table prints rows under upper-case headers, as the tanzu CLI's table output.
func Table(out io.Writer, headers []string, rows [][]string) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  "+strings.Join(headers, "\t"))
	for _, r := range rows {
		fmt.Fprintln(w, "  "+strings.Join(r, "\t"))
	}
	return w.Flush()
}

// Formats are the values of -o.
const Formats = "table, json or yaml"

// Print prints rows as a table, or for json and yaml as a list of objects keyed by the
// lower-case headers, as the tanzu CLI's output writer does.
func Print(out io.Writer, format string, headers []string, rows [][]string) error {
	switch format {
	case "", "table":
		return Table(out, headers, rows)
	case "json", "yaml":
		list := make([]map[string]string, 0, len(rows))
		for _, r := range rows {
			m := map[string]string{}
			for i, h := range headers {
				m[strings.ToLower(strings.ReplaceAll(h, " ", "-"))] = r[i]
			}
			list = append(list, m)
		}
		var data []byte
		var err error
		if format == "json" {
			data, err = json.MarshalIndent(list, "", "  ")
			data = append(data, '\n')
		} else {
			data, err = yaml.Marshal(list)
		}
		if err != nil {
			return err
		}
		_, err = out.Write(data)
		return err
	}
	return fmt.Errorf("invalid value %q for --output (-o): use %s", format, Formats)
}

// FlagError names the flag behind a library's *field.Error: flags maps the library's field
// paths to the flags that set them. Other errors are returned as they are.
func FlagError(err error, flags map[string]string) error {
	var fe *field.Error
	if !errors.As(err, &fe) {
		return err
	}
	flag, ok := flags[fe.Field]
	if !ok {
		return err
	}
	if fe.Type == field.ErrorTypeRequired {
		return fmt.Errorf("%s is required: %s", flag, fe.Detail)
	}
	return fmt.Errorf("%s %v is invalid: %s", flag, fe.BadValue, fe.Detail)
}

// ProgressFlags are TKG's -v and --log-file, on the commands that run a flow.
type ProgressFlags struct {
	Verbosity int
	LogFile   string
}

// Add adds the flags to cmd.
func (f *ProgressFlags) Add(cmd *cobra.Command) {
	cmd.Flags().IntVarP(&f.Verbosity, "verbose", "v", 0, "number for the log level verbosity (0-9): progress lines at 0, detail above")
	cmd.Flags().StringVar(&f.LogFile, "log-file", "", "also write the log, at verbosity max(4, -v), to this file")
}

// Printer returns the printer the flags ask for, printing on out. The logs of the libraries go
// to the log file only. The caller closes it.
func (f *ProgressFlags) Printer(out io.Writer) (*progress.Printer, error) {
	p, err := progress.New(out, f.Verbosity, f.LogFile)
	if err != nil {
		return nil, fmt.Errorf("--verbose: %w", err)
	}
	p.RouteLibraryLogs()
	return p, nil
}

// CredentialsSaved prints the tanzu CLI's lines after `kubeconfig get --admin` saved a
// cluster's credentials into path (exported, when --export-file named it).
func CredentialsSaved(out io.Writer, name, path string, exported bool) {
	fmt.Fprintf(out, "Credentials of cluster '%s' have been saved \n", name)
	if exported {
		fmt.Fprintf(out, "You can now access the cluster by running 'kubectl config use-context %s-admin@%s' under path '%s' \n", name, name, path)
		return
	}
	fmt.Fprintf(out, "You can now access the cluster by running 'kubectl config use-context %s-admin@%s'\n", name, name)
}

// Interactive says whether the command's input is a terminal, where a question can be answered.
func Interactive(streams genericiooptions.IOStreams) bool {
	f, ok := streams.In.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// Confirm asks a yes/no question on stderr as the tanzu CLI does; only y or Y continue, anything
// else is "aborted".
func Confirm(streams genericiooptions.IOStreams, question string) error {
	fmt.Fprintf(streams.ErrOut, "%s [y/N]: ", question)
	answer, _ := bufio.NewReader(streams.In).ReadString('\n')
	if a := strings.TrimSpace(answer); a != "y" && a != "Y" {
		return fmt.Errorf("aborted")
	}
	return nil
}

// AddTreeFlags adds TKG's `get` flags of the object tree to cmd.
func AddTreeFlags(cmd *cobra.Command, o *cluster.TreeOptions) {
	cmd.Flags().StringVar(&o.ShowAllConditions, "show-all-conditions", "", "list of comma separated kind or kind/name for which to show all the object's conditions (all to show conditions for all the objects)")
	cmd.Flags().BoolVar(&o.ShowDetails, "show-details", false, "show details about ready conditions for machines' infrastructure and bootstrap objects, even when they are ready")
	cmd.Flags().BoolVar(&o.ShowGroupMembers, "show-group-members", false, "expand machines that are grouped because their status is alike")
}

// OSFlags are TKG's --os-name, --os-version and --os-arch of an upgrade: the OS of the vSphere
// images the cluster's nodes move to.
type OSFlags struct{ Name, Version, Arch string }

// Add adds the flags to cmd.
func (f *OSFlags) Add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.Name, "os-name", "", "the OS of the nodes' vSphere image on the new release: ubuntu or photon (default: the nodes' own)")
	cmd.Flags().StringVar(&f.Version, "os-version", "", "the OS version of the nodes' vSphere image (default: the OS's, 20.04 for ubuntu, 3 for photon)")
	cmd.Flags().StringVar(&f.Arch, "os-arch", "", "the architecture of the nodes' vSphere image (default: amd64)")
}

// Selector checks the flags and returns the OS image selector they ask for, or "" when
// --os-name is not given (--os-version and --os-arch without it are refused).
func (f *OSFlags) Selector() (string, error) {
	if f.Name == "" {
		if f.Version != "" || f.Arch != "" {
			return "", fmt.Errorf("--os-version and --os-arch go with --os-name: name the OS too")
		}
		return "", nil
	}
	return config.OSImageSelector(f.Name, f.Version, f.Arch)
}

// AnnounceInstaller prints the installer's URL, says who can drive it, and opens it with the
// browser command (OpenBrowser).
func AnnounceInstaller(out io.Writer, what, browser string) func(url string) {
	return func(url string) {
		fmt.Fprintf(out, "Serving %s at %s\n", what, url)
		fmt.Fprintln(out, "Only a page opened from this URL (it carries this run's token) can drive the installer. Ctrl-C stops it.")
		if err := OpenBrowser(browser, url); err != nil {
			fmt.Fprintf(out, "Open the URL in a browser: %v\n", err)
		}
	}
}

// OpenBrowser opens url with the named browser command, the desktop's (xdg-open) when none is
// named, or not at all for "none". The browser is given a page that sends it on to url, not url
// itself: url carries the installer's token, and a command's arguments are readable by every
// user of the host (ps). The page is the user's alone (mode 0600 in a directory of mode 0700)
// and is removed a minute later, once the browser has read it.
func OpenBrowser(browser, url string) error {
	if browser == "none" {
		return nil
	}
	if browser == "" {
		for _, c := range []string{"xdg-open", "sensible-browser", "open"} {
			if _, err := exec.LookPath(c); err == nil {
				browser = c
				break
			}
		}
		if browser == "" {
			return errors.New("no browser found (xdg-open)")
		}
	}
	dir, err := os.MkdirTemp("", "slipway-installer-")
	if err != nil {
		return err
	}
	page := filepath.Join(dir, "open.html")
	body := fmt.Sprintf("<!doctype html>\n<meta http-equiv=\"refresh\" content=\"0; url=%s\">\n<title>slipway installer</title>\n<a href=\"%s\">Open the installer</a>\n",
		html.EscapeString(url), html.EscapeString(url))
	if err := os.WriteFile(page, []byte(body), 0o600); err != nil {
		os.RemoveAll(dir)
		return err
	}
	if err := exec.Command(browser, "file://"+page).Start(); err != nil {
		os.RemoveAll(dir)
		return err
	}
	time.AfterFunc(browserReadsPage, func() { os.RemoveAll(dir) })
	return nil
}

// browserReadsPage is how long OpenBrowser's page is kept for the browser to read.
var browserReadsPage = time.Minute

// StandInDigests reads the digests of the stand-in images from the layout `make images` built,
// by which a stand-in copied into one repository (a site's imgpkg copy), which keeps only its
// digest, is told simulated; the others are told by their names without it.
func StandInDigests() (map[string]bool, error) {
	set, err := assets.Find()
	if err != nil {
		return nil, err
	}
	return images.StandInDigests(filepath.Join(set.Dir, images.LayoutDir))
}
