package clusterctl

import (
	"context"
	"fmt"

	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/cluster"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/progress"
)

// MoveOptions are what Move takes.
type MoveOptions struct {
	// From and To reach the source and target clusters: a kubeconfig path and its context.
	FromKubeconfig, FromContext string
	ToKubeconfig, ToContext     string
	// Namespace holds the Cluster API objects to move.
	Namespace string
	// WorkDir receives the clusterctl configuration.
	WorkDir string
	// RecordDir, when set, receives each object the move creates on the target, as it was on the
	// source (read through From), one YAML file each; Move then returns their graph.
	RecordDir string
	From      client.Reader
	// Progress prints clusterctl's log: discovery counts, pause, create, delete, resume.
	Progress *progress.Printer
}

// Move runs clusterctl move: every Cluster API object of the namespace, with what it owns and
// references, goes from the source cluster to the target, which must have the same providers
// (clusterctl checks it). The source's clusters are paused for the move and resumed on the
// target. With RecordDir, it returns the graph of what it moved, for Graph.Compare to check the
// target against.
func Move(ctx context.Context, opts MoveOptions) (Graph, error) {
	c, err := newClient(ctx, opts.WorkDir, opts.Progress, nil, nil)
	if err != nil {
		return nil, err
	}
	var rec *recorder
	var mutators []cluster.ResourceMutatorFunc
	if opts.RecordDir != "" {
		rec = &recorder{from: opts.From, seen: map[string]bool{}}
		mutators = append(mutators, rec.record)
	}
	err = c.Move(ctx, clusterctlclient.MoveOptions{
		FromKubeconfig:               clusterctlclient.Kubeconfig{Path: opts.FromKubeconfig, Context: opts.FromContext},
		ToKubeconfig:                 clusterctlclient.Kubeconfig{Path: opts.ToKubeconfig, Context: opts.ToContext},
		Namespace:                    opts.Namespace,
		ExperimentalResourceMutators: mutators,
	})
	if err != nil {
		return nil, fmt.Errorf("failed to move the Cluster API objects of namespace %s: %w", opts.Namespace, err)
	}
	if rec == nil {
		return nil, nil
	}
	return rec.save(opts.RecordDir)
}
