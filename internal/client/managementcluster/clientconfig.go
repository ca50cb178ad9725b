package managementcluster

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

// ClientConfig returns the client configuration of slipway's state directory home: every management
// cluster made from it as a server, the current one (managementcluster.Current, with the
// kubeconfig at kubeconfigPath) and the features slipway's plugins always have.
func ClientConfig(home, kubeconfigPath string) (*Config, error) {
	cfg := &Config{
		APIVersion:    "config.tanzu.vmware.com/v1alpha1",
		Kind:          "ClientConfig",
		ClientOptions: ClientOptions{Features: map[string]map[string]string{"global": {ContextAwarePlugins: "true"}}},
	}
	names, err := Names(home)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		cfg.Servers = append(cfg.Servers, Server{Name: n, Type: "managementcluster", ManagementClusterOpts: ManagementClusterOpts{
			Path: SavedKubeconfig(home, n), Context: ContextName(n)}})
	}
	if cfg.Current, _, err = Current(home, kubeconfigPath); err != nil {
		return nil, err
	}
	return cfg, nil
}
