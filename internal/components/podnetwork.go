package components

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/slipway-dev/slipway/internal/local/podnet"
	"github.com/slipway-dev/slipway/internal/local/proc"
)

// localPodNetwork is the local runtime's own pod network (image local-pod-network), a DaemonSet
// in each node's network namespace: the node's CNI configuration, routes to the other nodes'
// pod CIDRs, and masquerading of what leaves the cluster's pods.
func localPodNetwork() Component {
	return Component{Name: "local-pod-network", Run: runLocalPodNetwork}
}

func runLocalPodNetwork(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("local-pod-network", pflag.ContinueOnError)
	node := fs.String("node-name", os.Getenv("NODE_NAME"), "the node this runs on (from $NODE_NAME)")
	cniDir := fs.String("cni-conf-dir", "/etc/cni/net.d", "the node's CNI configuration directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *node == "" {
		return errors.New("--node-name is not set: pass it, or set NODE_NAME from the pod's spec.nodeName")
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return fmt.Errorf("failed to read the pod's ServiceAccount credentials: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("failed to make a client of the API server: %w", err)
	}
	n := &podnet.Network{Client: client, NodeName: *node, CNIDir: *cniDir, Exec: proc.Output}
	return n.Run(ctx)
}
