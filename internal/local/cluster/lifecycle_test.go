package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/local/proc"
	"github.com/slipway-dev/slipway/internal/local/vm"
)

// TestDeleteTakesTheClustersItsProviderMade checks that deleting a management cluster deletes
// the clusters its local infrastructure provider made, and no other.
func TestDeleteTakesTheClustersItsProviderMade(t *testing.T) {
	s := Store{Root: t.TempDir()}
	write := func(spec *Spec) {
		t.Helper()
		dirs, err := s.Dirs(spec.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteSpec(dirs, spec); err != nil {
			t.Fatal(err)
		}
	}
	write(NewSpec("boot", "v1.35.4", 1, 1, 0))
	write(NewOwnedSpec("wc", "v1.34.3", 2, Owner{Namespace: "default", Name: "wc", UID: "u1", ManagementCluster: "boot"}))
	write(NewOwnedSpec("wc-of-wc", "v1.34.3", 3, Owner{Namespace: "default", Name: "wc-of-wc", UID: "u2", ManagementCluster: "wc"}))
	write(NewOwnedSpec("other", "v1.34.3", 4, Owner{Namespace: "default", Name: "other", UID: "u3", ManagementCluster: "mgmt"}))
	if err := s.Delete("boot", ""); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(s.Root, ".deleted-*")); len(left) > 0 {
		t.Errorf("delete left %v in the store", left)
	}
	for name, want := range map[string]bool{"boot": false, "wc": false, "wc-of-wc": false, "other": true} {
		dirs, err := s.Dirs(name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = os.Stat(dirs.Root)
		if exists := !errors.Is(err, os.ErrNotExist); exists != want {
			t.Errorf("cluster %s exists: %v, want %v", name, exists, want)
		}
	}
}

// TestDeleteStopsTheProviderBeforeWhatItMade checks that a management cluster's processes stop
// before the clusters its provider made are deleted: a provider still running would make a
// deleted cluster again (seen in e2e: a failed test's cleanup left a workload cluster's nodes).
func TestDeleteStopsTheProviderBeforeWhatItMade(t *testing.T) {
	s := Store{Root: t.TempDir()}
	boot, err := s.Dirs("boot")
	if err != nil {
		t.Fatal(err)
	}
	wc, err := s.Dirs("wc")
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSpec(boot, NewSpec("boot", "v1.35.4", 1, 1, 0)); err != nil {
		t.Fatal(err)
	}
	if err := WriteSpec(wc, NewOwnedSpec("wc", "v1.34.3", 2, Owner{Namespace: "default", Name: "wc", UID: "u1", ManagementCluster: "boot"})); err != nil {
		t.Fatal(err)
	}
	// The provider stand-in (this test binary, see TestMain) writes the workload cluster's spec
	// again and again, as a provider would remake a cluster it owns. Its argument under boot's
	// directory is how Delete finds it; it names the workload cluster's only in its environment,
	// where Delete does not look. It is one process, so nothing of it outlives its kill.
	data, err := os.ReadFile(wc.Spec())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(wc.Spec()); err != nil {
		t.Fatal(err)
	}
	provider := exec.Command(os.Args[0], "-test.run=^$", filepath.Join(boot.Root, "provider"))
	provider.Env = append(os.Environ(), helperEnv+"=rewrite", rewriteDirEnv+"="+wc.Root, rewriteDataEnv+"="+string(data))
	if err := provider.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { _ = provider.Wait(); close(stopped) }()
	t.Cleanup(func() { _ = provider.Process.Kill() })
	// The spec it writes again is the sign that it runs and will answer SIGTERM as a provider.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(wc.Spec()); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the provider stand-in did not write the workload cluster's spec within 10 s")
		}
	}
	if err := s.Delete("boot", ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the delete left the provider running")
	}
	for _, d := range []Dirs{boot, wc} {
		if _, err := os.Stat(d.Root); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left after the delete: %v", d.Root, err)
		}
	}
}

// TestCreateOnANameAProviderTookNamesItsCluster checks that creating a local cluster on a name
// a Cluster API Cluster's local cluster holds names that Cluster, not a delete that would break it.
func TestCreateOnANameAProviderTookNamesItsCluster(t *testing.T) {
	s := Store{Root: t.TempDir()}
	dirs, err := s.Dirs("wc")
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSpec(dirs, NewOwnedSpec("wc", "v1.35.4", 2, Owner{Namespace: "default", Name: "wc", UID: "u1", ManagementCluster: "mgmt"})); err != nil {
		t.Fatal(err)
	}
	err = s.Create(t.Context(), CreateOptions{Name: "wc", ControlPlaneNodes: 1})
	if err == nil || !strings.Contains(err.Error(), "Cluster default/wc, which management cluster mgmt manages") || strings.Contains(err.Error(), "local cluster delete") {
		t.Errorf("got %v", err)
	}
}

// TestOwnedClustersKubeconfigNamesWhereItIs checks that asking the store for the kubeconfig of a
// cluster Cluster API made says in one line where it is and which command saves it.
func TestOwnedClustersKubeconfigNamesWhereItIs(t *testing.T) {
	s := Store{Root: t.TempDir()}
	dirs, err := s.Dirs("wc")
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSpec(dirs, NewOwnedSpec("wc", "v1.35.4", 2, Owner{Namespace: "default", Name: "wc", UID: "u1", ManagementCluster: "mgmt"})); err != nil {
		t.Fatal(err)
	}
	_, err = s.Kubeconfig("wc")
	if err == nil || !strings.Contains(err.Error(), "`slipway cluster kubeconfig get wc -n default --admin`") || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v", err)
	}
}

// TestStartUnlessAliveStartsOnce checks that callers racing to start the same process (the
// provider of a cluster and the provider running in it) start one, and that a dead one is
// started again.
func TestStartUnlessAliveStartsOnce(t *testing.T) {
	dir := t.TempDir()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{sleep, "300"}
	pidPath, logPath := filepath.Join(dir, "x.pid"), filepath.Join(dir, "x.log")
	t.Cleanup(func() { _ = proc.Terminate([]int{proc.ReadPID(pidPath)}, time.Second) })
	var started atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := startUnlessAlive(args, pidPath, logPath, nil)
			if err != nil {
				t.Error(err)
			}
			if ok {
				started.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := started.Load(); n != 1 {
		t.Fatalf("8 racing callers started %d processes, want 1", n)
	}
	first := proc.ReadPID(pidPath)
	if err := proc.Terminate([]int{first}, time.Second); err != nil {
		t.Fatal(err)
	}
	if ok, err := startUnlessAlive(args, pidPath, logPath, nil); err != nil || !ok {
		t.Fatalf("a dead process was not started again: %v, %v", ok, err)
	}
	if again := proc.ReadPID(pidPath); again == first || !proc.Alive(pidPath, args) {
		t.Errorf("pid %d after the restart, %d before", again, first)
	}
}

// TestNoLoadBalancerForADeletingCluster: once a cluster's deletion has begun, nothing starts its
// load balancer again (the node service's watch racing a delete would leave a process and an
// address behind), and a start names the way out; a cluster not being deleted gets one.
func TestNoLoadBalancerForADeletingCluster(t *testing.T) {
	s := Store{Root: t.TempDir()}
	// The load balancer's command is the executable's `local lb run …`: true ends at once.
	exe, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		deleting bool
	}{{"kept", false}, {"going", true}} {
		dirs, err := s.Dirs(c.name)
		if err != nil {
			t.Fatal(err)
		}
		// One control-plane node: no address of the host's to add, so no root needed.
		if err := WriteSpec(dirs, NewSpec(c.name, "v1.35.4", 1, 1, 0)); err != nil {
			t.Fatal(err)
		}
		if c.deleting {
			if err := dirs.markDeleting(); err != nil {
				t.Fatal(err)
			}
		}
		started, err := StartLoadBalancerIn(dirs, exe)
		_, pidErr := os.Stat(dirs.LoadBalancerPID())
		switch {
		case c.deleting && (err == nil || !strings.Contains(err.Error(), "is being deleted: delete it again") || started || pidErr == nil):
			t.Errorf("%s, being deleted: started %v, pid file %v, %v; want a refusal naming the way out and no process", c.name, started, pidErr, err)
		case !c.deleting && (err != nil || !started || pidErr != nil):
			t.Errorf("%s: started %v, pid file %v, %v; want it started", c.name, started, pidErr, err)
		}
		if c.deleting != dirs.isDeleting() {
			t.Errorf("%s: isDeleting() = %v", c.name, dirs.isDeleting())
		}
	}
}

// TestDeleteLeavesAnAddressAnotherLoadBalancerListensOn: deleting a cluster takes its load
// balancer's address back from the host only when nothing listens there any more. Another store
// on this host may have laid out the same block: CI's unit tests, deleting a spec of block 2,
// took the address of an e2e workload cluster's endpoint away, and its kubeadm init timed out.
func TestDeleteLeavesAnAddressAnotherLoadBalancerListensOn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the host's addresses on the bridge need root")
	}
	// A block no cluster of this host is likely to hold while the test runs.
	const index = 253
	addr := netip.MustParseAddr(fmt.Sprintf("198.18.%d.1", index))
	onHost := func() bool {
		t.Helper()
		used, err := vm.UsedAddresses()
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(used, addr)
	}
	if onHost() {
		t.Skipf("a cluster of this host holds %s", addr)
	}
	if err := vm.AddHostAddress(addr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vm.RemoveHostAddress(addr) })
	// The load balancer of another store's cluster of the same block.
	other, err := net.Listen("tcp", net.JoinHostPort(addr.String(), fmt.Sprint(APIServerPort)))
	if err != nil {
		t.Fatal(err)
	}
	s := Store{Root: t.TempDir()}
	deleteOwned := func(name string) {
		t.Helper()
		dirs, err := s.Dirs(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteSpec(dirs, NewOwnedSpec(name, "v1.35.4", index, Owner{Namespace: "default", Name: name, UID: name})); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(name, ""); err != nil {
			t.Fatal(err)
		}
	}
	deleteOwned("first")
	if !onHost() {
		t.Fatalf("deleting a cluster took %s from the host while another load balancer listened there", addr)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	deleteOwned("second")
	if onHost() {
		t.Errorf("deleting a cluster left %s on the host, where nothing listened any more", addr)
	}
}
