package cluster

import (
	"os"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestNodeRuntimeOfCreate checks what --node-runtime makes: real nodes by default (refused
// without root, naming the way out), for a bootstrap cluster of vSphere real nodes when the
// vCenter is on the bridge and the agent's when it is off it, and a refusal naming the flag and
// the fix for a value it does not know or real nodes that could not reach the vCenter.
func TestNodeRuntimeOfCreate(t *testing.T) {
	const onBridge, offBridge = "198.18.0.1:8989", "vcenter.example.com"
	for _, tc := range []struct {
		name      string
		flags     createFlags
		asked     bool
		server    string
		wantReal  bool
		wantError string
	}{
		{name: "plain, default", flags: createFlags{nodeRuntime: "real", infrastructure: "local"}, wantReal: true},
		{name: "local bootstrap, default", flags: createFlags{nodeRuntime: "real", infrastructure: "local", bootstrap: true}, server: offBridge, wantReal: true},
		{name: "vsphere bootstrap, vCenter off the bridge", flags: createFlags{nodeRuntime: "real", infrastructure: "vsphere", bootstrap: true}, server: offBridge},
		{name: "vsphere bootstrap, vCenter on the bridge", flags: createFlags{nodeRuntime: "real", infrastructure: "vsphere", bootstrap: true}, server: onBridge, wantReal: true},
		{name: "agent asked", flags: createFlags{nodeRuntime: "agent", infrastructure: "local"}, asked: true},
		{name: "agent for vsphere on the bridge", flags: createFlags{nodeRuntime: "agent", infrastructure: "vsphere", bootstrap: true}, asked: true, server: onBridge},
		{name: "real for vsphere on the bridge", flags: createFlags{nodeRuntime: "real", infrastructure: "vsphere", bootstrap: true}, asked: true, server: onBridge, wantReal: true},
		{name: "real for vsphere off the bridge", flags: createFlags{nodeRuntime: "real", infrastructure: "vsphere", bootstrap: true}, asked: true, server: offBridge,
			wantError: `--node-runtime real: VSPHERE_SERVER "vcenter.example.com" is off the local runtime's bridge`},
		{name: "unknown", flags: createFlags{nodeRuntime: "vm", infrastructure: "local"}, asked: true,
			wantError: `invalid --node-runtime "vm": use real`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantReal && !tc.asked && os.Geteuid() != 0 {
				// Without root, the default is refused with the way out.
				tc.wantError = "run slipway as root, or use --node-runtime agent"
			}
			got, err := tc.flags.realNodes(tc.asked, tc.server)
			switch {
			case tc.wantError != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("want an error saying %q, got %v", tc.wantError, err)
				}
			case err != nil:
				t.Fatal(err)
			case got != tc.wantReal:
				t.Errorf("real nodes: %v, want %v", got, tc.wantReal)
			}
		})
	}
}

// TestNodeRuntimeDefaultIsReal checks the command's own default: a plain create given no
// --node-runtime asks for real nodes.
func TestNodeRuntimeDefaultIsReal(t *testing.T) {
	cmd := newCreateCommand(genericiooptions.NewTestIOStreamsDiscard())
	if err := cmd.ParseFlags([]string{"--worker-nodes", "2"}); err != nil {
		t.Fatal(err)
	}
	flag := cmd.Flags().Lookup("node-runtime")
	if flag.Changed || flag.Value.String() != "real" {
		t.Errorf("--node-runtime unset is %q (changed: %v), want real", flag.Value, flag.Changed)
	}
}
