package cluster

import "testing"

func TestNewRealSpecLaysOutNodesAsKind(t *testing.T) {
	s := NewSpec("dev", "v1.35.4", 3, 3, 2)
	want := []struct{ name, role, ip string }{
		{"dev-control-plane", RoleControlPlane, "198.18.3.2"},
		{"dev-control-plane2", RoleControlPlane, "198.18.3.3"},
		{"dev-control-plane3", RoleControlPlane, "198.18.3.4"},
		{"dev-worker", RoleWorker, "198.18.3.5"},
		{"dev-worker2", RoleWorker, "198.18.3.6"},
	}
	if len(s.Nodes) != len(want) {
		t.Fatalf("got %d nodes", len(s.Nodes))
	}
	for i, w := range want {
		n := s.Nodes[i]
		if n.Name != w.name || n.Role != w.role || n.IP != w.ip {
			t.Errorf("node %d = %+v, want %+v", i, n, w)
		}
	}
	if !s.Real() || s.Endpoint() != "https://198.18.3.1:6443" || s.NodeNetwork() != "198.18.3.0/24" {
		t.Errorf("endpoint %s, nodes in %s, real %v", s.Endpoint(), s.NodeNetwork(), s.Real())
	}
	if got := NewSpec("one", "v1.35.4", 1, 1, 0).Endpoint(); got != "https://198.18.1.2:6443" {
		t.Errorf("single control-plane endpoint = %s, want its node's", got)
	}
}

func TestOwnedSpecIsOnTheBridge(t *testing.T) {
	s := NewOwnedSpec("wc", "", 4, Owner{Namespace: "default", Name: "wc", UID: "u1"})
	if !s.Real() || s.Endpoint() != "https://198.18.4.1:6443" || s.NodeNetwork() != "198.18.4.0/24" {
		t.Fatalf("owned spec: real %v, endpoint %s, nodes in %s", s.Real(), s.Endpoint(), s.NodeNetwork())
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
	if n.IP != "198.18.4.3" {
		t.Errorf("node %+v: want the freed 198.18.4.3", n)
	}
}
