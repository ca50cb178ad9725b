package nodeservice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/local/cluster"
)

// serve runs the service of host in a temporary directory for the test and returns its client.
func serve(t *testing.T, host cluster.Host) *Client {
	t.Helper()
	// A short directory: a socket's path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "ns")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, host, dir) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		os.RemoveAll(dir)
	})
	socket := cluster.NodeServiceSocket(dir)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(socket); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service made no socket %s", socket)
		}
	}
	if info, err := os.Stat(socket); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v, mode %v; want 0600: only root may make nodes", socket, err, info.Mode())
	}
	return NewClient(socket)
}

// TestTheStoreThroughTheSocket checks that a provider in a container sees the store as one on
// the host does: specs written and read back whole, a missing cluster as os.ErrNotExist and
// cluster.ErrNotFound, the cluster a node is in.
func TestTheStoreThroughTheSocket(t *testing.T) {
	store := cluster.Store{Root: t.TempDir()}
	c := serve(t, cluster.LocalHost{Store: store, Executable: "/nonexistent/slipway"})
	ctx := t.Context()

	if _, err := c.ReadSpec(ctx, "wc"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadSpec of no cluster: %v, want os.ErrNotExist", err)
	}
	spec := cluster.NewOwnedSpec("wc", "v1.35.4", 3, cluster.Owner{Namespace: "default", Name: "wc", UID: "u1", ManagementCluster: "mgmt"})
	node, err := spec.AddNode("wc-md-0-abcde", cluster.RoleWorker)
	if err != nil {
		t.Fatal(err)
	}
	spec.Nodes[len(spec.Nodes)-1].ProviderID = "local://default/wc-md-0-abcde"
	if err := c.WriteSpec(ctx, spec); err != nil {
		t.Fatal(err)
	}
	// What the service wrote is what the store holds, byte for byte of its JSON.
	onHost, err := cluster.LocalHost{Store: store}.ReadSpec(ctx, "wc")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(onHost, spec) {
		t.Fatalf("the store holds %+v, want %+v", onHost, spec)
	}
	got, err := c.ReadSpec(ctx, "wc")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, spec) {
		t.Fatalf("ReadSpec through the socket: %+v, want %+v", got, spec)
	}
	if home, err := c.ClusterOf(ctx, node.Name); err != nil || home != "wc" {
		t.Fatalf("ClusterOf(%s) = %q, %v; want wc", node.Name, home, err)
	}
	if _, err := c.ClusterOf(ctx, "nobody"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ClusterOf of no node: %v, want os.ErrNotExist", err)
	}
	index, err := c.FreeIndex(ctx)
	if err != nil || index == 3 || index < 1 {
		t.Fatalf("FreeIndex = %d, %v; want a block other than wc's 3", index, err)
	}
	if err := c.Delete(ctx, "wc"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "wc"); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("Delete of a deleted cluster: %v, want cluster.ErrNotFound", err)
	}
	if _, err := os.Stat(filepath.Join(store.Root, "wc")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("wc's directory is left: %v", err)
	}
}

// recorder is a Host that records its calls and answers with what the test set.
type recorder struct {
	cluster.Host
	calls   []string
	started bool
	err     error
	// spec is the stored spec ReadSpec answers; nil is none.
	spec *cluster.Spec
}

func (r *recorder) ReadSpec(_ context.Context, name string) (*cluster.Spec, error) {
	if r.spec == nil || r.spec.Name != name {
		return nil, os.ErrNotExist
	}
	return r.spec, nil
}

func (r *recorder) WriteSpec(_ context.Context, spec *cluster.Spec) error {
	r.calls = append(r.calls, fmt.Sprintf("WriteSpec %s %v", spec.Name, spec.HostRegistries))
	return r.err
}

func (r *recorder) StartNode(_ context.Context, name string, node cluster.NodeSpec) (bool, error) {
	r.calls = append(r.calls, "StartNode "+name+" "+node.Name+" "+node.IP)
	return r.started, r.err
}

func (r *recorder) StopNode(_ context.Context, name, node string) error {
	r.calls = append(r.calls, "StopNode "+name+" "+node)
	return r.err
}

func (r *recorder) StartLoadBalancer(_ context.Context, name string) (bool, error) {
	r.calls = append(r.calls, "StartLoadBalancer "+name)
	return r.started, r.err
}

func (r *recorder) PrepareNode(_ context.Context, spec *cluster.Spec, node cluster.NodeSpec, userData []byte, registry string) error {
	r.calls = append(r.calls, "PrepareNode "+spec.Name+" "+node.Name+" "+string(userData)+" "+registry)
	return r.err
}

func (r *recorder) CheckHostLimits(_ context.Context, controlPlanes, workers int, report func(string)) error {
	r.calls = append(r.calls, "CheckHostLimits")
	report("raised fs.inotify.max_user_instances to 8192")
	report("raised vm.max_map_count to 262144")
	return r.err
}

func (r *recorder) EnsureNodeImage(_ context.Context, version string) (string, error) {
	r.calls = append(r.calls, "EnsureNodeImage "+version)
	return "127.0.0.1:5000", r.err
}

// TestCallsReachTheHost checks that each call reaches the host with its arguments and brings
// back its answer, and that the host's refusal comes back as the caller's error.
func TestCallsReachTheHost(t *testing.T) {
	host := &recorder{started: true}
	c := serve(t, host)
	ctx := t.Context()
	spec := cluster.NewOwnedSpec("wc", "v1.35.4", 3, cluster.Owner{Namespace: "default", Name: "wc", UID: "u1"})
	node, err := spec.AddNode("wc-cp-1", cluster.RoleControlPlane)
	if err != nil {
		t.Fatal(err)
	}
	if started, err := c.StartNode(ctx, "wc", node); err != nil || !started {
		t.Fatalf("StartNode = %v, %v; want true", started, err)
	}
	if started, err := c.StartLoadBalancer(ctx, "wc"); err != nil || !started {
		t.Fatalf("StartLoadBalancer = %v, %v; want true", started, err)
	}
	if err := c.PrepareNode(ctx, spec, node, []byte("#cloud-config"), "127.0.0.1:5000"); err != nil {
		t.Fatal(err)
	}
	var reports []string
	if err := c.CheckHostLimits(ctx, 1, 0, func(msg string) { reports = append(reports, msg) }); err != nil {
		t.Fatal(err)
	}
	if len(reports) != 2 || !strings.Contains(reports[1], "max_map_count") {
		t.Fatalf("CheckHostLimits reported %q, want both of the host's reports in order", reports)
	}
	if registry, err := c.EnsureNodeImage(ctx, "v1.35.4"); err != nil || registry != "127.0.0.1:5000" {
		t.Fatalf("EnsureNodeImage = %q, %v", registry, err)
	}
	host.err = errors.New("node wc-cp-1 of wc: the power lock is held")
	if err := c.StopNode(ctx, "wc", "wc-cp-1"); err == nil || err.Error() != host.err.Error() {
		t.Fatalf("StopNode = %v, want the host's %q", err, host.err)
	}
	want := []string{
		"StartNode wc wc-cp-1 " + node.IP,
		"StartLoadBalancer wc",
		"PrepareNode wc wc-cp-1 #cloud-config 127.0.0.1:5000",
		"CheckHostLimits",
		"EnsureNodeImage v1.35.4",
		"StopNode wc wc-cp-1",
	}
	if !reflect.DeepEqual(host.calls, want) {
		t.Fatalf("the host saw %q, want %q", host.calls, want)
	}
	// A caller cannot give a node egress off this host: the call is refused before the host
	// sees it.
	host.calls, host.err = nil, nil
	spec.Egress = []string{"203.0.113.7:443"}
	if err := c.PrepareNode(ctx, spec, node, []byte("#cloud-config"), "127.0.0.1:5000"); err == nil || !strings.Contains(err.Error(), "only by this host's own commands") {
		t.Errorf("PrepareNode with egress: %v, want a refusal", err)
	}
	if err := c.WriteSpec(ctx, spec); err == nil || !strings.Contains(err.Error(), "only by this host's own commands") {
		t.Errorf("WriteSpec with egress: %v, want a refusal", err)
	}
	if len(host.calls) != 0 {
		t.Errorf("the host saw %q", host.calls)
	}
}

// TestCallsOfEarlierReleasesAreServed checks that a call keeps its name on the wire when its Go
// name changes: a management cluster's provider of an earlier release calls the host's service.
func TestCallsOfEarlierReleasesAreServed(t *testing.T) {
	srv := httptest.NewServer(Handler(&recorder{started: true}))
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/v1/EnsureRealNodeImage", "application/json", strings.NewReader(`{"version":"v1.35.4"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "127.0.0.1:5000") {
		t.Errorf("EnsureRealNodeImage answered %s: %s", resp.Status, body)
	}
}

// TestHostRegistriesAreOnLoopback checks that a caller of the service can have the nodes pull
// from a registry on this host's loopback only, named as a registry: anything else is refused,
// naming the field and the fix, before the host sees the call.
func TestHostRegistriesAreOnLoopback(t *testing.T) {
	host := &recorder{}
	c := serve(t, host)
	ctx := t.Context()
	spec := cluster.NewOwnedSpec("wc", "v1.35.4", 3, cluster.Owner{Namespace: "default", Name: "wc", UID: "u1"})
	node, err := spec.AddNode("wc-cp-1", cluster.RoleControlPlane)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ registry, want string }{
		{"registry.example.com:5000", "cluster wc: spec.hostRegistries registry.example.com:5000: its registry registry.example.com:5000 is not on this host's IPv4 loopback"},
		{"127.0.0.1", "cluster wc: spec.hostRegistries 127.0.0.1: name the port of the registry on this host's loopback"},
		{"127.0.0.1:5001/tkg", "cluster wc: spec.hostRegistries 127.0.0.1:5001/tkg: name a registry (127.0.0.1:PORT), not a repository in it"},
	} {
		spec.HostRegistries = []string{tc.registry}
		if err := c.PrepareNode(ctx, spec, node, []byte("#cloud-config"), "127.0.0.1:5000"); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("PrepareNode with registry %s: %v, want %q", tc.registry, err, tc.want)
		}
		if err := c.WriteSpec(ctx, spec); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("WriteSpec with registry %s: %v, want %q", tc.registry, err, tc.want)
		}
	}
	if len(host.calls) != 0 {
		t.Errorf("the host saw %q", host.calls)
	}
	spec.HostRegistries = []string{"127.0.0.1:5001", "localhost:5002"}
	if err := c.PrepareNode(ctx, spec, node, []byte("#cloud-config"), "127.0.0.1:5000"); err != nil {
		t.Fatalf("PrepareNode with registries on loopback: %v", err)
	}
	// A spec written again with the registries it has (to add or remove a node) does not wait
	// on them: nothing answers on these ports, and the write goes through.
	stored := *spec
	host.spec = &stored
	if err := c.WriteSpec(ctx, spec); err != nil {
		t.Fatalf("WriteSpec with the registries the stored spec has: %v", err)
	}
	if want := []string{"PrepareNode wc wc-cp-1 #cloud-config 127.0.0.1:5000", "WriteSpec wc [127.0.0.1:5001 localhost:5002]"}; !reflect.DeepEqual(host.calls, want) {
		t.Errorf("the host saw %q, want %q", host.calls, want)
	}
}

// TestNoServiceIsSaid checks that a provider whose node has no service is told what starts it.
func TestNoServiceIsSaid(t *testing.T) {
	c := NewClient(filepath.Join(t.TempDir(), "node.sock"))
	_, err := c.ReadSpec(t.Context(), "wc")
	if err == nil || !strings.Contains(err.Error(), "slipway local cluster start") {
		t.Fatalf("ReadSpec without a service: %v, want what starts it", err)
	}
}
