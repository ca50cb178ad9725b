package cluster

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/pki"
)

// TestRealSpecAddresses checks the layout of a cluster of real nodes on the bridge: nodes from
// 198.18.<index>.2, the load balancer of several control-plane nodes at .1, no loopback address.
func TestRealSpecAddresses(t *testing.T) {
	s := NewSpec("ha", "v1.35.4", 7, 3, 2)
	if !s.Real() || s.LoadBalancerIP != "198.18.7.1" || s.Endpoint() != "https://198.18.7.1:6443" {
		t.Fatalf("runtime %q, load balancer %q, endpoint %q", s.Runtime, s.LoadBalancerIP, s.Endpoint())
	}
	want := map[string]string{"ha-control-plane": "198.18.7.2", "ha-control-plane3": "198.18.7.4", "ha-worker": "198.18.7.5", "ha-worker2": "198.18.7.6"}
	for _, n := range s.Nodes {
		if a, ok := want[n.Name]; ok && n.IP != a {
			t.Errorf("node %s at %s, want %s", n.Name, n.IP, a)
		}
	}
	if one := NewSpec("one", "v1.35.4", 3, 1, 0); one.LoadBalancerIP != "" || one.Endpoint() != "https://198.18.3.2:6443" {
		t.Errorf("one control-plane node: load balancer %q, endpoint %q", one.LoadBalancerIP, one.Endpoint())
	}
}

// TestUserData checks the cloud-config of each kind of node: kubeadm init with the release's
// images on the first control-plane node, kubeadm join pinned to the CA elsewhere, with the
// control plane's address on the others, and the preflight check skipped by name.
func TestUserData(t *testing.T) {
	cas, err := pki.GenerateCAs()
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBootstrap(cas)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.token) != 23 || b.token[6] != '.' || !strings.HasPrefix(b.caHash, "sha256:") || len(b.caHash) != 71 {
		t.Fatalf("token %q, hash %q", b.token, b.caHash)
	}
	// A token of digits alone reads as a YAML number unless it is quoted, and kubeadm refuses it.
	b.token = "123456.0123456789012345"
	s := NewSpec("ha", "v1.34.3", 4, 2, 1)
	type file struct{ Path, Content string }
	type cloudConfig struct {
		WriteFiles []file   `json:"write_files"`
		RunCmd     []string `json:"runcmd"`
	}
	for _, tc := range []struct {
		node    int
		command string
		want    []string
		absent  []string
	}{
		{0, "kubeadm init", []string{"kind: InitConfiguration", `token: "` + b.token + `"`, "advertiseAddress: 198.18.4.2",
			"kubernetesVersion: v1.34.3+vmware.1", "imageRepository: projects.registry.vmware.com/tkg", "controlPlaneEndpoint: 198.18.4.1:6443",
			"imageTag: v3.6.5_vmware.1", "imageTag: v1.12.1_vmware.1", "podSubnet: 100.96.0.0/11", "serviceSubnet: 100.64.0.0/13",
		}, []string{"taints: []", "ignorePreflightErrors", "KubeProxyConfiguration"}},
		{1, "kubeadm join", []string{"kind: JoinConfiguration", "apiServerEndpoint: 198.18.4.1:6443", "caCertHashes: [" + b.caHash + "]",
			"controlPlane:", "advertiseAddress: 198.18.4.3"}, []string{"unsafeSkipCAVerification"}},
		{2, "kubeadm join", []string{"kind: JoinConfiguration", `token: "` + b.token + `"`}, []string{"controlPlane:"}},
	} {
		n := s.Nodes[tc.node]
		data, err := userData(s, n, b)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(data, "## template: jinja\n#cloud-config\n") {
			t.Errorf("%s: not a Jinja cloud-config:\n%s", n.Name, data)
		}
		var cfg cloudConfig
		if err := yaml.Unmarshal([]byte(data), &cfg); err != nil {
			t.Fatalf("%s: %v\n%s", n.Name, err, data)
		}
		if len(cfg.WriteFiles) != 1 || cfg.WriteFiles[0].Path != "/run/kubeadm/kubeadm.yaml" || len(cfg.RunCmd) != 1 || !strings.HasPrefix(cfg.RunCmd[0], tc.command+" --config /run/kubeadm/kubeadm.yaml") {
			t.Fatalf("%s: %+v", n.Name, cfg)
		}
		var kubeadm struct {
			BootstrapTokens []struct{ Token string } `json:"bootstrapTokens"`
			Discovery       struct {
				BootstrapToken struct{ Token string } `json:"bootstrapToken"`
			} `json:"discovery"`
		}
		first, _, _ := strings.Cut(cfg.WriteFiles[0].Content, "\n---\n")
		if err := yaml.Unmarshal([]byte(first), &kubeadm); err != nil {
			t.Fatalf("%s: kubeadm's configuration: %v", n.Name, err)
		}
		token := kubeadm.Discovery.BootstrapToken.Token
		if len(kubeadm.BootstrapTokens) > 0 {
			token = kubeadm.BootstrapTokens[0].Token
		}
		if token != b.token {
			t.Errorf("%s: bootstrap token %q, want %q", n.Name, token, b.token)
		}
		for _, w := range tc.want {
			if !strings.Contains(cfg.WriteFiles[0].Content, w) {
				t.Errorf("%s: kubeadm's configuration lacks %q:\n%s", n.Name, w, cfg.WriteFiles[0].Content)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(cfg.WriteFiles[0].Content, a) {
				t.Errorf("%s: kubeadm's configuration has %q", n.Name, a)
			}
		}
	}
	// Without workers, the control plane runs the pods.
	one := NewSpec("one", "v1.35.4", 4, 1, 0)
	data, err := userData(one, one.Nodes[0], b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(data, "taints: []") {
		t.Errorf("a cluster without workers keeps its control-plane taint:\n%s", data)
	}
}
