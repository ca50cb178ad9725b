package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/slipway-dev/slipway/internal/local/hostlimits"
	"github.com/slipway-dev/slipway/internal/local/hostnet"
	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/statedir"
)

// Store is the directory that holds every local cluster.
type Store struct {
	// Root holds one directory per cluster.
	Root string
}

// DefaultStore returns the store in slipway's state directory.
func DefaultStore() (Store, error) {
	dir, err := statedir.Path()
	if err != nil {
		return Store{}, err
	}
	return Store{Root: filepath.Join(dir, "local")}, nil
}

// CheckHostLimits refuses when this host cannot hold controlPlanes and workers more nodes, naming
// each limit that falls short and how to raise it; where the
// user allows it (hostlimits.RaiseEnv) it raises the kernel's limits and says so through report.
func (s Store) CheckHostLimits(controlPlanes, workers int, report func(string)) error {
	return hostlimits.Host{Proc: "/proc", Store: s.Root}.Check(hostlimits.PerNode.Nodes(controlPlanes, workers), hostlimits.RaiseAllowed(), report)
}

// ErrNotFound says a cluster does not exist.
var ErrNotFound = errors.New("not found")

// Get returns a cluster's spec.
func (s Store) Get(name string) (*Spec, error) {
	dirs, err := s.Dirs(name)
	if err != nil {
		return nil, err
	}
	spec, err := ReadSpec(dirs)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("local cluster %q %w: `slipway local cluster list` shows the clusters there are", name, ErrNotFound)
	}
	return spec, err
}

// List returns the specs of every cluster, by name.
func (s Store) List() ([]*Spec, error) {
	entries, err := os.ReadDir(s.Root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var specs []*Spec
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dirs, err := s.Dirs(e.Name())
		if err != nil {
			continue // not a cluster's directory
		}
		spec, err := ReadSpec(dirs)
		if err != nil {
			continue // a cluster still being created or half deleted
		}
		specs = append(specs, spec)
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	return specs, nil
}

// LockBlocks takes the store's lock on its blocks of the bridge and returns its release, which may
// be called more than once. Whoever chooses a block (FreeIndex) holds it until the spec that
// holds the block is written, so that two creates at once never take the same block; another
// store's clusters hold theirs by their nodes' addresses.
func (s Store) LockBlocks() (func(), error) { return proc.Lock(filepath.Join(s.Root, "blocks.lock")) }

// FreeIndex returns the lowest address block no cluster uses.
func (s Store) FreeIndex() (int, error) {
	specs, err := s.List()
	if err != nil {
		return 0, err
	}
	// Real nodes of another store on this host hold their block on the bridge.
	used, err := realBlocksInUse()
	if err != nil {
		return 0, err
	}
	for _, spec := range specs {
		used[spec.Index] = true
	}
	// The bridge's block for endpoints is no cluster's.
	used[int(hostnet.EndpointBlock.Addr().As4()[2])] = true
	for i := 1; i < 255; i++ {
		if !used[i] {
			return i, nil
		}
	}
	return 0, errors.New("every block of the local runtime (198.18.i.0/24 for i from 1 to 254) is taken: delete a local cluster first")
}
