// Package registry holds `slipway local registry`: the OCI registry of the embedded default,
// a detached process on loopback that package bundles are pushed to and fetched from.
package registry

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrl "sigs.k8s.io/controller-runtime"

	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/local/registry"
)

// paths of the registry's state in slipway's home.
type paths struct{ dir string }

func newPaths() (paths, error) {
	home, err := localcluster.Home()
	if err != nil {
		return paths{}, err
	}
	return paths{dir: filepath.Join(home, "registry")}, nil
}

func (p paths) data() string { return filepath.Join(p.dir, "data") }
func (p paths) pid() string  { return filepath.Join(p.dir, "registry.pid") }
func (p paths) log() string  { return filepath.Join(p.dir, "registry.log") }

// runArgs begin the arguments of the registry's process.
var runArgs = []string{"slipway", "local", "registry", "run"}

// NewCommand returns `slipway local registry`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "registry", Short: "Run the local OCI registry that package bundles are pushed to"}
	var address string
	start := &cobra.Command{
		Use:   "start",
		Short: "Start the registry in the background (state in the slipway home: pushed bundles survive restarts)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := newPaths()
			if err != nil {
				return err
			}
			if proc.Alive(p.pid(), runArgs) {
				_, err := fmt.Fprintf(streams.Out, "The registry already runs (pid %d)\n", proc.ReadPID(p.pid()))
				return err
			}
			if err := os.MkdirAll(p.dir, 0o700); err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			if _, err := proc.SpawnDetached([]string{exe, "local", "registry", "run", "--address", address, "--dir", p.data()}, p.log(), p.pid()); err != nil {
				return err
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				resp, err := http.Get("http://" + address + "/v2/")
				if err == nil {
					resp.Body.Close()
					break
				}
				if time.Now().After(deadline) || !proc.Alive(p.pid(), runArgs) {
					return fmt.Errorf("the registry did not start: see %s", p.log())
				}
				time.Sleep(100 * time.Millisecond)
			}
			_, err = fmt.Fprintf(streams.Out, "Registry listening on %s (push bundles to %s/packages/NAME:VERSION)\n", address, address)
			return err
		},
	}
	start.Flags().StringVar(&address, "address", registry.DefaultAddress, "loopback address to listen on")

	stop := &cobra.Command{
		Use:   "stop",
		Short: "Stop the registry (pushed bundles are kept)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			p, err := newPaths()
			if err != nil {
				return err
			}
			if !proc.Alive(p.pid(), runArgs) {
				_, err := fmt.Fprintln(streams.Out, "The registry does not run")
				return err
			}
			return proc.Terminate([]int{proc.ReadPID(p.pid())}, 10*time.Second)
		},
	}

	var dir string
	run := &cobra.Command{
		Use:    "run",
		Short:  "Serve the registry in the foreground until SIGTERM",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return registry.Serve(ctrl.SetupSignalHandler(), address, dir)
		},
	}
	run.Flags().StringVar(&address, "address", registry.DefaultAddress, "loopback address to listen on")
	run.Flags().StringVar(&dir, "dir", "", "directory of blobs and the manifest journal")
	_ = run.MarkFlagRequired("dir")
	cmd.AddCommand(start, stop, run)
	return cmd
}
