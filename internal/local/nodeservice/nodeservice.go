package nodeservice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/local/cluster"
)

// maxSocketPath is the kernel's limit on a Unix socket's path (sun_path less its NUL).
const maxSocketPath = 107

// The calls' bodies.
type (
	nameArgs struct {
		Name string `json:"name"`
	}
	nodeArgs struct {
		Name string           `json:"name"`
		Node cluster.NodeSpec `json:"node"`
	}
	stopArgs struct {
		Name string `json:"name"`
		Node string `json:"node"`
	}
	prepareArgs struct {
		Spec     *cluster.Spec    `json:"spec"`
		Node     cluster.NodeSpec `json:"node"`
		UserData []byte           `json:"userData,omitempty"`
		Registry string           `json:"registry,omitempty"`
	}
	limitsArgs struct {
		ControlPlanes int `json:"controlPlanes"`
		Workers       int `json:"workers"`
	}
	versionArgs struct {
		Version string `json:"version"`
	}
	clusterOfArgs struct {
		Node string `json:"node"`
	}
	// reply is every call's answer: its result, or the error with its kind.
	reply struct {
		Result json.RawMessage `json:"result,omitempty"`
		Error  string          `json:"error,omitempty"`
		Kind   string          `json:"kind,omitempty"`
	}
	// limitsResult is CheckHostLimits' answer: what it reported, in order.
	limitsResult struct {
		Reports []string `json:"reports,omitempty"`
	}
)

// Error kinds a caller tells apart (errors.Is), kept through the socket.
const (
	kindNotExist = "NotExist"
	kindNotFound = "NotFound"
)

func kindOf(err error) string {
	switch {
	case errors.Is(err, cluster.ErrNotFound):
		return kindNotFound
	case errors.Is(err, os.ErrNotExist):
		return kindNotExist
	}
	return ""
}

// remoteError is an error of the host, as the service sent it.
type remoteError struct {
	msg, kind string
}

func (e *remoteError) Error() string { return e.msg }

func (e *remoteError) Is(target error) bool {
	return (e.kind == kindNotFound && target == cluster.ErrNotFound) || (e.kind == kindNotExist && target == os.ErrNotExist)
}

// refuseEgress refuses a spec with egress destinations from a caller of the service: a node's
// egress dials off this host on its behalf, which only this host's own commands may give it (a
// bootstrap cluster's, on vSphere), never a pod that mounts the service; the clusters the local
// provider makes need none.
func refuseEgress(spec *cluster.Spec) error {
	if len(spec.Egress) > 0 {
		return fmt.Errorf("cluster %s: egress destinations %v are given only by this host's own commands, not through the node service", spec.Name, spec.Egress)
	}
	return nil
}

// hostRegistriesField is where a caller of the service names more registries for the nodes: a
// LocalCluster's, which the local provider copies into its cluster's spec from the Cluster's
// imageRepository variable.
const hostRegistriesField = "spec.hostRegistries"

// checkHostRegistries checks the registries a caller of the service has the nodes pull from
// besides the local registry: each must be a registry on this host's loopback, which a node
// reaches on the bridge address (cluster.HostRegistry), and each not in known must answer there
// (so that a spec written again, to remove a node, does not wait on a registry already taken).
func checkHostRegistries(spec *cluster.Spec, known []string) error {
	var added []string
	for _, r := range spec.HostRegistries {
		host, err := cluster.HostRegistry(hostRegistriesField, r)
		if err == nil && host != r {
			err = fmt.Errorf("%s %s: name a registry (127.0.0.1:PORT), not a repository in it", hostRegistriesField, r)
		}
		if err != nil {
			return fmt.Errorf("cluster %s: %w", spec.Name, err)
		}
		if !slices.Contains(known, r) {
			added = append(added, r)
		}
	}
	if err := cluster.CheckHostRegistries(hostRegistriesField+" (the Cluster's imageRepository variable)", added); err != nil {
		return fmt.Errorf("cluster %s: %w", spec.Name, err)
	}
	return nil
}

// knownRegistries are the registries the stored spec of the cluster named already has.
func knownRegistries(ctx context.Context, host cluster.Host, name string) []string {
	spec, err := host.ReadSpec(ctx, name)
	if err != nil {
		return nil
	}
	return spec.HostRegistries
}

// ensureNodeImageCall is EnsureNodeImage's name on the wire, kept from when a node was "real" as
// against the retired node agent's: a provider image of an earlier release, in a management
// cluster made then, calls it so.
const ensureNodeImageCall = "EnsureRealNodeImage"

// Handler serves host's calls.
func Handler(host cluster.Host) http.Handler {
	mux := http.NewServeMux()
	handle(mux, "ReadSpec", func(ctx context.Context, a nameArgs) (any, error) { return host.ReadSpec(ctx, a.Name) })
	handle(mux, "WriteSpec", func(ctx context.Context, spec cluster.Spec) (any, error) {
		if err := refuseEgress(&spec); err != nil {
			return nil, err
		}
		if err := checkHostRegistries(&spec, knownRegistries(ctx, host, spec.Name)); err != nil {
			return nil, err
		}
		return nil, host.WriteSpec(ctx, &spec)
	})
	handle(mux, "FreeIndex", func(ctx context.Context, _ struct{}) (any, error) { return host.FreeIndex(ctx) })
	handle(mux, "PrepareNode", func(ctx context.Context, a prepareArgs) (any, error) {
		if a.Spec == nil {
			return nil, errors.New("PrepareNode: spec is missing")
		}
		if err := refuseEgress(a.Spec); err != nil {
			return nil, err
		}
		// The spec is written before its nodes are prepared: its registries were checked then.
		if err := checkHostRegistries(a.Spec, a.Spec.HostRegistries); err != nil {
			return nil, err
		}
		return nil, host.PrepareNode(ctx, a.Spec, a.Node, a.UserData, a.Registry)
	})
	handle(mux, "StartNode", func(ctx context.Context, a nodeArgs) (any, error) { return host.StartNode(ctx, a.Name, a.Node) })
	handle(mux, "StopNode", func(ctx context.Context, a stopArgs) (any, error) { return nil, host.StopNode(ctx, a.Name, a.Node) })
	handle(mux, "StartLoadBalancer", func(ctx context.Context, a nameArgs) (any, error) { return host.StartLoadBalancer(ctx, a.Name) })
	handle(mux, "Delete", func(ctx context.Context, a nameArgs) (any, error) { return nil, host.Delete(ctx, a.Name) })
	handle(mux, "CheckHostLimits", func(ctx context.Context, a limitsArgs) (any, error) {
		var res limitsResult
		// What was raised before a refusal is said in the refusal's place.
		err := host.CheckHostLimits(ctx, a.ControlPlanes, a.Workers, func(msg string) { res.Reports = append(res.Reports, msg) })
		return res, err
	})
	handle(mux, ensureNodeImageCall, func(ctx context.Context, a versionArgs) (any, error) { return host.EnsureNodeImage(ctx, a.Version) })
	handle(mux, "ClusterOf", func(ctx context.Context, a clusterOfArgs) (any, error) { return host.ClusterOf(ctx, a.Node) })
	return mux
}

// handle serves method: its body decoded as A, call's result or error as the reply.
func handle[A any](mux *http.ServeMux, method string, call func(ctx context.Context, args A) (any, error)) {
	mux.HandleFunc("POST /v1/"+method, func(w http.ResponseWriter, r *http.Request) {
		var args A
		var result any
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err == nil {
			err = decode(body, &args)
		}
		if err == nil {
			result, err = call(r.Context(), args)
		}
		var rep reply
		if err != nil {
			rep.Error, rep.Kind = err.Error(), kindOf(err)
			ctrl.LoggerFrom(r.Context()).Info("Call failed", "method", method, "error", err.Error())
		} else if rep.Result, err = json.Marshal(result); err != nil {
			rep.Error = err.Error()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rep)
	})
}

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("the call's body is not what the node service takes: %w", err)
	}
	return nil
}

// loadBalancerWatch is how often the node service checks that the load balancers of the store's
// plain clusters run.
const loadBalancerWatch = 2 * time.Second

// Run is the node service of store, whose nodes run exe: it serves them (Serve) and starts again
// the load balancers of the store's plain clusters (cluster.Store.WatchLoadBalancers) until ctx
// ends.
func Run(ctx context.Context, store cluster.Store, exe string) error {
	go store.WatchLoadBalancers(ctx, exe, loadBalancerWatch)
	return Serve(ctx, cluster.LocalHost{Store: store, Executable: exe}, store.NodeServiceDir())
}

// Serve serves host on the socket in dir (cluster.NodeServiceSocket) until ctx ends. Only root
// may connect: the service makes and deletes nodes of this host.
func Serve(ctx context.Context, host cluster.Host, dir string) error {
	socket := cluster.NodeServiceSocket(dir)
	if len(socket) > maxSocketPath {
		return fmt.Errorf("the node service's socket %s is longer than the %d bytes a socket's path may have: use a shorter SLIPWAY_HOME", socket, maxSocketPath)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// A socket left by a killed service is in the way; a live service holds the lock that its
	// starter took (cluster.EnsureNodeService), so this one is alone.
	if err := os.Remove(socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	l, err := net.Listen("unix", socket)
	if err != nil {
		return fmt.Errorf("the node service cannot listen on %s: %w", socket, err)
	}
	if err := os.Chmod(socket, 0o600); err != nil {
		l.Close()
		return err
	}
	srv := &http.Server{Handler: Handler(host), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	ctrl.LoggerFrom(ctx).Info("Serving the local runtime's nodes", "socket", socket)
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Client is the Host of a provider in a container: the node service on the socket at Socket.
type Client struct {
	Socket string
	http   *http.Client
}

var _ cluster.Host = (*Client)(nil)

// NewClient returns the client of the service listening on socket.
func NewClient(socket string) *Client {
	return &Client{Socket: socket, http: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		},
	}}}
}

// call posts args to method and decodes its result into result (nil: none).
func (c *Client) call(ctx context.Context, method string, args, result any) error {
	body, err := json.Marshal(args)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://node-service/v1/"+method, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("the local runtime's node service at %s does not answer (`slipway local cluster start` on the host starts it): %w", c.Socket, err)
	}
	defer resp.Body.Close()
	var rep reply
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return fmt.Errorf("the node service's answer to %s is not its JSON (%s): %w", method, resp.Status, err)
	}
	if rep.Error != "" {
		return &remoteError{msg: rep.Error, kind: rep.Kind}
	}
	if result == nil || len(rep.Result) == 0 {
		return nil
	}
	return json.Unmarshal(rep.Result, result)
}

// ReadSpec implements cluster.Host.
func (c *Client) ReadSpec(ctx context.Context, name string) (*cluster.Spec, error) {
	spec := &cluster.Spec{}
	if err := c.call(ctx, "ReadSpec", nameArgs{Name: name}, spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// WriteSpec implements cluster.Host.
func (c *Client) WriteSpec(ctx context.Context, spec *cluster.Spec) error {
	return c.call(ctx, "WriteSpec", spec, nil)
}

// FreeIndex implements cluster.Host.
func (c *Client) FreeIndex(ctx context.Context) (int, error) {
	var index int
	err := c.call(ctx, "FreeIndex", struct{}{}, &index)
	return index, err
}

// PrepareNode implements cluster.Host.
func (c *Client) PrepareNode(ctx context.Context, spec *cluster.Spec, node cluster.NodeSpec, userData []byte, registry string) error {
	return c.call(ctx, "PrepareNode", prepareArgs{Spec: spec, Node: node, UserData: userData, Registry: registry}, nil)
}

// StartNode implements cluster.Host.
func (c *Client) StartNode(ctx context.Context, name string, node cluster.NodeSpec) (bool, error) {
	var started bool
	err := c.call(ctx, "StartNode", nodeArgs{Name: name, Node: node}, &started)
	return started, err
}

// StopNode implements cluster.Host.
func (c *Client) StopNode(ctx context.Context, name, node string) error {
	return c.call(ctx, "StopNode", stopArgs{Name: name, Node: node}, nil)
}

// StartLoadBalancer implements cluster.Host.
func (c *Client) StartLoadBalancer(ctx context.Context, name string) (bool, error) {
	var started bool
	err := c.call(ctx, "StartLoadBalancer", nameArgs{Name: name}, &started)
	return started, err
}

// Delete implements cluster.Host.
func (c *Client) Delete(ctx context.Context, name string) error {
	return c.call(ctx, "Delete", nameArgs{Name: name}, nil)
}

// CheckHostLimits implements cluster.Host.
func (c *Client) CheckHostLimits(ctx context.Context, controlPlanes, workers int, report func(string)) error {
	var res limitsResult
	if err := c.call(ctx, "CheckHostLimits", limitsArgs{ControlPlanes: controlPlanes, Workers: workers}, &res); err != nil {
		return err
	}
	for _, msg := range res.Reports {
		report(msg)
	}
	return nil
}

// EnsureNodeImage implements cluster.Host.
func (c *Client) EnsureNodeImage(ctx context.Context, version string) (string, error) {
	var registry string
	err := c.call(ctx, ensureNodeImageCall, versionArgs{Version: version}, &registry)
	return registry, err
}

// ClusterOf implements cluster.Host.
func (c *Client) ClusterOf(ctx context.Context, node string) (string, error) {
	var name string
	err := c.call(ctx, "ClusterOf", clusterOfArgs{Node: node}, &name)
	return name, err
}
