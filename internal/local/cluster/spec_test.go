package cluster

import "testing"

func TestNewSpecLaysOutNodesAsKind(t *testing.T) {
	s := NewSpec("dev", "v1.35.4", 3, 3, 2)
	want := []struct{ name, role, ip, address, pods, loop string }{
		{"dev-control-plane", RoleControlPlane, "127.3.0.2", "172.18.3.2", "10.244.1.0/24", "127.3.1.0/24"},
		{"dev-control-plane2", RoleControlPlane, "127.3.0.3", "172.18.3.3", "10.244.2.0/24", "127.3.2.0/24"},
		{"dev-control-plane3", RoleControlPlane, "127.3.0.4", "172.18.3.4", "10.244.3.0/24", "127.3.3.0/24"},
		{"dev-worker", RoleWorker, "127.3.0.5", "172.18.3.5", "10.244.4.0/24", "127.3.4.0/24"},
		{"dev-worker2", RoleWorker, "127.3.0.6", "172.18.3.6", "10.244.5.0/24", "127.3.5.0/24"},
	}
	if len(s.Nodes) != len(want) {
		t.Fatalf("got %d nodes", len(s.Nodes))
	}
	for i, w := range want {
		n := s.Nodes[i]
		if n.Name != w.name || n.Role != w.role || n.IP != w.ip || n.Address != w.address || n.PodCIDR != w.pods || n.PodLoopbackCIDR != w.loop {
			t.Errorf("node %d = %+v, want %+v", i, n, w)
		}
	}
	if s.Endpoint() != "https://127.3.0.1:6443" {
		t.Errorf("endpoint %s, want the load balancer", s.Endpoint())
	}
	if got := NewSpec("one", "v1.35.4", 1, 1, 0).Endpoint(); got != "https://127.1.0.2:6443" {
		t.Errorf("single control plane endpoint %s, want the node", got)
	}
	wantEtcd := "dev-control-plane=https://127.3.0.2:2380,dev-control-plane2=https://127.3.0.3:2380,dev-control-plane3=https://127.3.0.4:2380"
	if got := s.EtcdInitialCluster(); got != wantEtcd {
		t.Errorf("initial cluster %s", got)
	}
}

func TestLoopbackTranslatesOnlyThisClustersAddresses(t *testing.T) {
	s := NewSpec("dev", "v1.35.4", 7, 1, 1)
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"172.18.7.2", "127.7.0.2", true},   // control-plane node
		{"172.18.7.3", "127.7.0.3", true},   // worker node
		{"10.244.2.17", "127.7.2.17", true}, // a pod on the worker
		{"127.7.1.5", "127.7.1.5", true},    // already loopback
		{"10.96.0.1", "", false},            // a ClusterIP
		{"172.18.8.2", "", false},           // another cluster's node
		{"8.8.8.8", "", false},
		{"::1", "", false},
	} {
		got, err := s.Loopback(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Loopback(%s) = %q, %v; want %q, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestOwnedSpecOfRealNodesIsOnTheBridge(t *testing.T) {
	s := NewOwnedSpec("wc", "", 4, Owner{Namespace: "default", Name: "wc", UID: "u1"}, RuntimeReal)
	if !s.Real() || s.Endpoint() != "https://198.18.4.1:6443" || s.NodeNetwork() != "198.18.4.0/24" {
		t.Fatalf("real owned spec: real %v, endpoint %s, nodes in %s", s.Real(), s.Endpoint(), s.NodeNetwork())
	}
	for _, name := range []string{"wc-cp-1", "wc-md-1", "wc-md-2"} {
		if _, err := s.AddNode(name, RoleWorker); err != nil {
			t.Fatal(err)
		}
	}
	// A machine that goes frees its address for the next one.
	s.RemoveNode("wc-md-1")
	n, err := s.AddNode("wc-md-3", RoleWorker)
	if err != nil {
		t.Fatal(err)
	}
	if n.IP != "198.18.4.3" || n.Address != n.IP || n.PodCIDR != "" || n.PodLoopbackCIDR != "" {
		t.Errorf("real node %+v: want 198.18.4.3 as both addresses and no pod CIDR of the runtime's", n)
	}
	agent := NewOwnedSpec("wc", "", 4, Owner{Namespace: "default", Name: "wc", UID: "u1"}, "")
	if agent.Real() || agent.Endpoint() != "https://127.4.0.1:6443" || agent.NodeNetwork() != "127.4.0.0/16" {
		t.Errorf("node agent's owned spec: real %v, endpoint %s, nodes in %s", agent.Real(), agent.Endpoint(), agent.NodeNetwork())
	}
}
