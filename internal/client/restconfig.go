package client

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/scheme"
)

// Throttling of the flows' API clients. client-go's default, 5 requests a second, made the
// move check's 32 reads take 6 s; 20 a second leaves the flows' checks unthrottled and stays
// well under clusterctl's own 500, since the CLI shares this host's CPU with the API servers it
// talks to.
const (
	QPS   = 20
	Burst = 100
)

// RESTConfig returns the REST configuration of a kubeconfig's context: the file at path (the
// default loading rules, $KUBECONFIG then ~/.kube/config, when path is ""), its current context
// when context is "".
func RESTConfig(path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		where := path
		if where == "" {
			where = "($KUBECONFIG, or ~/.kube/config)"
		}
		return nil, fmt.Errorf("failed to read kubeconfig %s: %w", where, err)
	}
	cfg.QPS, cfg.Burst = QPS, Burst
	return cfg, nil
}

// New returns a client, with slipway's scheme, of a kubeconfig's context, as RESTConfig reads it.
func New(path, context string) (client.Client, error) {
	cfg, err := RESTConfig(path, context)
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme.New()})
}
