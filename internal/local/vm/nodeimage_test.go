package vm

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestNodeKubeadm: the node's kubeadm skips SystemVerification on init and join, and gives an
// init configuration without a KubeProxyConfiguration the node's, in a copy; a configuration
// with one, a phase and any other command pass as they are.
func TestNodeKubeadm(t *testing.T) {
	const skip = "--ignore-preflight-errors=SystemVerification"
	files := map[string]string{
		"/run/kubeadm/kubeadm.yaml": "kind: InitConfiguration\n---\nkind: ClusterConfiguration\n",
		"/run/kubeadm/with-kp.yaml": "kind: ClusterConfiguration\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n",
		"/run/kubeadm/kubeadm-join": "kind: JoinConfiguration\n",
	}
	written := map[string]string{}
	writes := 0
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	write := func(p string, data []byte, _ os.FileMode) error { written[p] = string(data); writes++; return nil }
	for _, tc := range []struct {
		args, want []string
	}{
		{[]string{"init", "--config", "/run/kubeadm/kubeadm.yaml"}, []string{"init", skip, "--config", "/run/kubeadm/kubeadm.node.yaml"}},
		{[]string{"-v5", "init", "--config=/run/kubeadm/kubeadm.yaml"}, []string{"-v5", "init", skip, "--config=/run/kubeadm/kubeadm.node.yaml"}},
		{[]string{"init", "--config", "/run/kubeadm/with-kp.yaml"}, []string{"init", skip, "--config", "/run/kubeadm/with-kp.yaml"}},
		{[]string{"join", "--config", "/run/kubeadm/kubeadm-join"}, []string{"join", skip, "--config", "/run/kubeadm/kubeadm-join"}},
		{[]string{"init", "phase", "upload-config", "all"}, []string{"init", "phase", "upload-config", "all"}},
		{[]string{"join", "phase", "preflight"}, []string{"join", skip, "phase", "preflight"}},
		{[]string{"join", "--ignore-preflight-errors=All", "--config", "/run/kubeadm/kubeadm-join"}, []string{"join", "--ignore-preflight-errors=All", "--config", "/run/kubeadm/kubeadm-join"}},
		{[]string{"token", "create"}, []string{"token", "create"}},
		{[]string{"version"}, []string{"version"}},
	} {
		got, err := kubeadmArgs(tc.args, read, write)
		if err != nil {
			t.Errorf("kubeadm %v: %v", tc.args, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("kubeadm %v runs as kubeadm %v, want %v", tc.args, got, tc.want)
		}
	}
	completed := written["/run/kubeadm/kubeadm.node.yaml"]
	if !strings.HasPrefix(completed, files["/run/kubeadm/kubeadm.yaml"]) || !strings.Contains(completed, "---\n"+nodeKubeProxyConfig) {
		t.Errorf("the completed init configuration is\n%s", completed)
	}
	// Two of the cases complete the same configuration.
	if len(written) != 1 || writes != 2 {
		t.Errorf("wrote %d files %d times, want the one completed copy twice: %v", len(written), writes, written)
	}
	if _, err := kubeadmArgs([]string{"init", "--config", "/nowhere.yaml"}, read, write); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "kubeadm's configuration") {
		t.Errorf("a missing configuration: %v", err)
	}
}
