package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/vm"
	"github.com/slipway-dev/slipway/internal/test/clitest"
)

// TestLocalClusterHighlyAvailable checks that three control-plane nodes of real nodes (kubeadm
// init, then kubeadm join --control-plane) form one three-member etcd cluster behind the load
// balancer, and that a node lost as a VM whose kernel died shows in list and is booted again by
// start, its etcd member back.
func TestLocalClusterHighlyAvailable(t *testing.T) {
	needRoot(t)
	startRegistryWithNodeImages(t)
	before := vm.OnHost()
	lc := createCluster(t, "e2e-ha", "--control-plane-nodes", "3")
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
		second := lc.dirs.Node(spec.ControlPlane()[1].Name)
		// Every process of the node killed with SIGKILL, its init first, as a VM's kernel dying
		// would end them.
		if _, ok := vm.Running(second); !ok {
			t.Fatalf("the node in %s does not run", second)
		}
		for _, p := range nodeProcesses(t, second) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		out, err := runSlipway(t, "local", "cluster", "list")
		if err != nil {
			t.Fatal(err)
		}
		if !clitest.LineHas(out, "e2e-ha", "Degraded (2/3 nodes running)") {
			t.Fatalf("list does not report the killed node:\n%s", out)
		}
		started := time.Now()
		if out, err := runSlipway(t, "local", "cluster", "start", "e2e-ha"); err != nil {
			t.Fatalf("start: %v\n%s", err, out)
		} else {
			t.Logf("start returned after %s:\n%s", time.Since(started).Round(100*time.Millisecond), out)
		}
		out, err = runSlipway(t, "local", "cluster", "list")
		if err != nil || !clitest.LineHas(out, "e2e-ha", "Running") {
			t.Fatalf("list after start: %v\n%s", err, out)
		}
		eventually(t, 2*time.Minute, "etcd's three members after start", func() error {
			members, err := etcdMembers(t.Context(), lc, spec)
			if err != nil || len(members) != 3 {
				return fmt.Errorf("members %v: %v", members, err)
			}
			return nil
		})
		t.Logf("etcd's three members answered %s after start began", time.Since(started).Round(100*time.Millisecond))
	})

	t.Run("the node service starts a killed load balancer again", func(t *testing.T) {
		// No infrastructure provider owns this cluster: the store's node service watches its
		// load balancer, as Docker restarts kind's load balancer container.
		r := killLoadBalancer(t, lc.client, "e2e-ha", lc.dirs.LoadBalancerPID())
		t.Logf("%s of %s started again after %s, answering after %s", r.kind, r.name, r.restarted.Round(100*time.Millisecond), r.answered.Round(100*time.Millisecond))
		log, err := os.ReadFile(filepath.Join(filepath.Dir(lc.dirs.Root), ".node-service", "node-service.log"))
		said := slices.ContainsFunc(strings.Split(string(log), "\n"), func(l string) bool {
			return strings.Contains(l, "Started the load balancer again") && strings.Contains(l, `"cluster":"e2e-ha"`)
		})
		if err != nil || !said {
			t.Errorf("the node service's log does not say it started the load balancer of e2e-ha again (%v):\n%s", err, log)
		}
	})

	t.Run("delete leaves no process, port or file behind", func(t *testing.T) {
		if out, err := runSlipway(t, "local", "cluster", "delete", "e2e-ha"); err != nil {
			t.Fatalf("delete: %v\n%s", err, out)
		}
		if _, err := os.Stat(lc.dirs.Root); !os.IsNotExist(err) {
			t.Errorf("cluster directory %s survives delete: %v", lc.dirs.Root, err)
		}
		checkNoRealNodeLeft(t, before)
	})
}

func readSpec(lc *localCluster) (*cluster.Spec, error) { return cluster.ReadSpec(lc.dirs) }

// etcdMembers asks the first control-plane node's etcd for the member list, with the
// health-check client certificate.
func etcdMembers(ctx context.Context, lc *localCluster, spec *cluster.Spec) ([]string, error) {
	first := spec.ControlPlane()[0]
	pkiDir := vm.RootPath(lc.dirs.Node(first.Name), "/etc/kubernetes/pki")
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
