// Package clitest runs a CLI noun's cobra command in a test, against a kubeconfig.
package clitest

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Runner runs one noun's command with --kubeconfig.
type Runner struct {
	// New returns the noun's command, such as packages.NewCommand.
	New        func(genericiooptions.IOStreams) *cobra.Command
	Kubeconfig string
}

// Run runs the command with args and returns what it printed, standard output then standard
// error.
func (r Runner) Run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd := r.New(streams)
	cmd.SetArgs(append(args, "--kubeconfig", r.Kubeconfig))
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage = true
	err := cmd.ExecuteContext(t.Context())
	return out.String() + errOut.String(), err
}

// MustRun is Run that fails the test on error.
func (r Runner) MustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := r.Run(t, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", r.New(genericiooptions.NewTestIOStreamsDiscard()).Name(), strings.Join(args, " "), err, out)
	}
	return out
}
