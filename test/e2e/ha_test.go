package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/test/clitest"
)

// TestLocalClusterHighlyAvailable checks that three control-plane nodes form one three-member
// etcd cluster behind the load balancer, and that losing a node's agent shows in list and is
// mended by start.
func TestLocalClusterHighlyAvailable(t *testing.T) {
	lc := createCluster(t, "e2e-ha", "--node-runtime", "agent", "--control-plane-nodes", "3")
	spec, err := readSpec(lc)
	if err != nil {
		t.Fatal(err)
	}
	if spec.LoadBalancerIP == "" || lc.config.Host != spec.Endpoint() {
		t.Fatalf("endpoint %s is not the load balancer %s", lc.config.Host, spec.LoadBalancerIP)
	}

	t.Run("etcd has three members", func(t *testing.T) {
		members, err := etcdMembers(t.Context(), lc, spec)
		if err != nil {
			t.Fatal(err)
		}
		if len(members) != 3 {
			t.Fatalf("etcd has %d members (%v), want 3", len(members), members)
		}
	})

	t.Run("list reports a killed node and start brings it back", func(t *testing.T) {
		second := spec.ControlPlane()[1].Name
		// As kill -9 of the node's processes, or a host restart, would.
		killAll(t, proc.ReadPID(lc.dirs.NodePID(second)), lc.dirs.Node(second)+"/")
		out, err := runSlipway(t, "local", "cluster", "list")
		if err != nil {
			t.Fatal(err)
		}
		if !clitest.LineHas(out, "e2e-ha", "Degraded (2/3 nodes running)") {
			t.Fatalf("list does not report the killed node:\n%s", out)
		}
		if out, err := runSlipway(t, "local", "cluster", "start", "e2e-ha"); err != nil {
			t.Fatalf("start: %v\n%s", err, out)
		}
		out, err = runSlipway(t, "local", "cluster", "list")
		if err != nil || !clitest.LineHas(out, "e2e-ha", "Running") {
			t.Fatalf("list after start: %v\n%s", err, out)
		}
		members, err := etcdMembers(t.Context(), lc, spec)
		if err != nil || len(members) != 3 {
			t.Fatalf("etcd after start: %v %v", members, err)
		}
	})

	t.Run("delete leaves no process, port or file behind", func(t *testing.T) {
		if out, err := runSlipway(t, "local", "cluster", "delete", "e2e-ha"); err != nil {
			t.Fatalf("delete: %v\n%s", err, out)
		}
		assertGone(t, lc.dirs.Root, nodeAddresses(spec))
	})
}

func readSpec(lc *localCluster) (*cluster.Spec, error) { return cluster.ReadSpec(lc.dirs) }

// nodeAddresses lists every address a cluster listens on.
func nodeAddresses(spec *cluster.Spec) []string {
	var addrs []string
	if spec.LoadBalancerIP != "" {
		addrs = append(addrs, net.JoinHostPort(spec.LoadBalancerIP, fmt.Sprint(cluster.APIServerPort)))
	}
	for _, n := range spec.Nodes {
		for _, p := range []int{cluster.APIServerPort, cluster.EtcdPort, cluster.EtcdPeerPort, cluster.KubeletPort, cluster.KCMPort, cluster.SchedulerPort} {
			addrs = append(addrs, net.JoinHostPort(n.IP, fmt.Sprint(p)))
		}
	}
	return addrs
}

// etcdMembers asks the first control-plane node's etcd for the member list, with the
// health-check client certificate.
func etcdMembers(ctx context.Context, lc *localCluster, spec *cluster.Spec) ([]string, error) {
	first := spec.ControlPlane()[0]
	pkiDir := lc.dirs.NodePKI(first.Name)
	cert, err := tls.LoadX509KeyPair(filepath.Join(pkiDir, "etcd/healthcheck-client.crt"), filepath.Join(pkiDir, "etcd/healthcheck-client.key"))
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(filepath.Join(pkiDir, "etcd/ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{"https://" + net.JoinHostPort(first.IP, fmt.Sprint(cluster.EtcdPort))},
		DialTimeout: 5 * time.Second,
		TLS:         &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool},
	})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.MemberList(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, m := range resp.Members {
		names = append(names, m.Name)
	}
	return names, nil
}
