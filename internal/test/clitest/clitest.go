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

// LineHas reports whether one line of out contains every part.
func LineHas(out string, parts ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// HasRow reports whether one line of a table is exactly the given cells.
func HasRow(out string, cells ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(cells, " ") {
			return true
		}
	}
	return false
}
