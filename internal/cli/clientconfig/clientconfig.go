// Package clientconfig holds `slipway config get`: the tanzu CLI's client configuration as slipway
// has it, made from its state rather than kept in a file of its own.
package clientconfig

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/client/managementcluster"
	"github.com/slipway-dev/slipway/internal/statedir"
)

// ContextAwarePlugins is the tanzu CLI feature that makes a plugin act on the current
// management cluster; slipway's plugins always do.
const ContextAwarePlugins = "context-aware-cli-for-plugins"

// Config is the shape of the tanzu CLI's ClientConfig (config.tanzu.vmware.com/v1alpha1), with
// what slipway has of it.
type Config struct {
	APIVersion    string        `json:"apiVersion"`
	Kind          string        `json:"kind"`
	ClientOptions ClientOptions `json:"clientOptions"`
	// Current is the management cluster commands act on when none is named.
	Current string   `json:"current,omitempty"`
	Servers []Server `json:"servers,omitempty"`
}

// ClientOptions holds the CLI's feature flags, by plugin ("global" for all).
type ClientOptions struct {
	Features map[string]map[string]string `json:"features"`
}

// Server is a management cluster the CLI knows, with the kubeconfig that reaches it.
type Server struct {
	Name                  string                `json:"name"`
	Type                  string                `json:"type"`
	ManagementClusterOpts ManagementClusterOpts `json:"managementClusterOpts"`
}

// ManagementClusterOpts is where a management cluster's admin kubeconfig is.
type ManagementClusterOpts struct {
	Path    string `json:"path"`
	Context string `json:"context"`
}

// Get returns the client configuration of slipway's state directory home: every management
// cluster made from it as a server, the current one (managementcluster.Current, with the
// kubeconfig at kubeconfigPath) and the features slipway's plugins always have.
func Get(home, kubeconfigPath string) (*Config, error) {
	cfg := &Config{
		APIVersion:    "config.tanzu.vmware.com/v1alpha1",
		Kind:          "ClientConfig",
		ClientOptions: ClientOptions{Features: map[string]map[string]string{"global": {ContextAwarePlugins: "true"}}},
	}
	names, err := managementcluster.Names(home)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		cfg.Servers = append(cfg.Servers, Server{Name: n, Type: "managementcluster", ManagementClusterOpts: ManagementClusterOpts{
			Path: filepath.Join(home, "management", n+".kubeconfig"), Context: managementcluster.ContextName(n)}})
	}
	if cfg.Current, _, err = managementcluster.Current(home, kubeconfigPath); err != nil {
		return nil, err
	}
	return cfg, nil
}

// NewCommand returns `slipway config`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the client configuration, as `tanzu config`",
	}
	var kubeconfig string
	get := &cobra.Command{
		Use:   "get",
		Short: "Print the client configuration as the tanzu CLI's ClientConfig YAML",
		Long: "Print the client configuration as the tanzu CLI's ClientConfig YAML: the management clusters made\n" +
			"from this host (servers), the one commands act on when none is named (current), and the features\n" +
			"of slipway's plugins (context-aware-cli-for-plugins: they always act on the current management\n" +
			"cluster). slipway keeps no file of it: it is read from slipway's state directory each time, so\n" +
			"`tanzu config set` has no counterpart.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			home, err := statedir.Path()
			if err != nil {
				return err
			}
			cfg, err := Get(home, kubeconfig)
			if err != nil {
				return err
			}
			data, err := yaml.Marshal(cfg)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(streams.Out, string(data))
			return err
		},
	}
	get.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig whose current context picks the current management cluster (default kubectl's)")
	cmd.AddCommand(get)
	return cmd
}
