package podnet

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func node(name, cidr, ip string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if cidr != "" {
		n.Spec.PodCIDR, n.Spec.PodCIDRs = cidr, []string{cidr}
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: ip}}
	return n
}

// fakeNode records the commands the network runs and answers `ip route show` with its routes.
type fakeNode struct {
	routes   map[string]string
	restores []string
	jumps    int
}

func (f *fakeNode) exec(_ context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := name + " " + strings.Join(args, " ")
	switch {
	case strings.HasPrefix(cmd, "ip -4 route show proto 199"):
		var b strings.Builder
		for cidr, via := range f.routes {
			b.WriteString(cidr + " via " + via + " dev eth0 \n")
		}
		return []byte(b.String()), nil
	case strings.HasPrefix(cmd, "ip -4 route replace "):
		f.routes[args[3]] = args[5]
	case strings.HasPrefix(cmd, "ip -4 route del "):
		delete(f.routes, args[3])
	case name == "iptables-restore":
		f.restores = append(f.restores, string(stdin))
	case strings.Contains(cmd, " -C POSTROUTING "):
		if f.jumps == 0 {
			return nil, os.ErrNotExist
		}
	case strings.Contains(cmd, " -A POSTROUTING "):
		f.jumps++
	}
	return nil, nil
}

// TestSync checks what the network programs as nodes come and go: the CNI configuration of the
// node's own pod CIDR, a route per other node, stale routes removed, and a masquerade chain that
// spares the cluster's pod CIDRs.
func TestSync(t *testing.T) {
	ctx := t.Context()
	client := fake.NewClientset(node("a", "", "198.18.0.2"), node("b", "100.96.1.0/24", "198.18.0.3"))
	f := &fakeNode{routes: map[string]string{"100.96.9.0/24": "198.18.0.9"}}
	n := &Network{Client: client, NodeName: "a", CNIDir: t.TempDir(), Exec: f.exec}
	if err := n.Sync(ctx); err == nil || !strings.Contains(err.Error(), "no pod CIDR") {
		t.Fatalf("a node without a pod CIDR: %v", err)
	}
	a, _ := client.CoreV1().Nodes().Get(ctx, "a", metav1.GetOptions{})
	a.Spec.PodCIDR, a.Spec.PodCIDRs = "100.96.0.0/24", []string{"100.96.0.0/24"}
	if _, err := client.CoreV1().Nodes().Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := n.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(n.CNIDir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []struct {
			Type string
			IPAM struct {
				Ranges [][]struct{ Subnet string }
			}
		}
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		t.Fatal(err)
	}
	if len(conf.Plugins) != 2 || conf.Plugins[0].Type != "bridge" || conf.Plugins[0].IPAM.Ranges[0][0].Subnet != "100.96.0.0/24" || conf.Plugins[1].Type != "portmap" {
		t.Errorf("CNI configuration:\n%s", data)
	}
	if len(f.routes) != 1 || f.routes["100.96.1.0/24"] != "198.18.0.3" {
		t.Errorf("routes %v, want only 100.96.1.0/24 via 198.18.0.3", f.routes)
	}
	last := f.restores[len(f.restores)-1]
	for _, want := range []string{"-A SLIPWAY-POD-NETWORK -d 100.96.0.0/24 -j RETURN", "-A SLIPWAY-POD-NETWORK -d 100.96.1.0/24 -j RETURN", "-A SLIPWAY-POD-NETWORK -s 100.96.0.0/24 -j MASQUERADE"} {
		if !strings.Contains(last, want) {
			t.Errorf("the masquerade chain lacks %q:\n%s", want, last)
		}
	}
	if f.jumps != 1 {
		t.Errorf("the jump to the chain was added %d times, want once", f.jumps)
	}
	if err := client.CoreV1().Nodes().Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := n.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.routes) != 0 {
		t.Errorf("the route to a deleted node is left: %v", f.routes)
	}
}
