package node

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/slipway-dev/slipway/internal/local/cluster"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// egressConfigFile is the API server's egress selector configuration in the node directory.
const egressConfigFile = "egress-selector.yaml"

// egressConfig sends the API server's cluster traffic (webhooks, kubelets, aggregated APIs,
// service and pod proxying) to the node agent's proxy and everything else directly.
const egressConfig = `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
- name: controlplane
  connection:
    proxyProtocol: Direct
- name: etcd
  connection:
    proxyProtocol: Direct
`

// egressSocket returns the proxy's socket.
func (a *Agent) egressSocket() string { return a.dirs.EgressSocket(a.node.Name) }

// serveEgress writes the egress configuration and serves HTTP CONNECT on its socket: the
// API server asks for a node's or a pod's network address, and the proxy connects to the
// loopback address that answers for it. Any other destination is refused.
func (a *Agent) serveEgress(ctx context.Context) error {
	socket := a.egressSocket()
	config := fmt.Sprintf(egressConfig, socket)
	if err := os.WriteFile(filepath.Join(a.dirs.Node(a.node.Name), egressConfigFile), []byte(config), 0o600); err != nil {
		return err
	}
	_ = os.Remove(socket)
	l, err := net.Listen("unix", socket)
	if err != nil {
		return fmt.Errorf("failed to listen for the API server's egress: %w", err)
	}
	go func() {
		<-ctx.Done()
		l.Close()
		_ = os.Remove(socket)
	}()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go a.proxyConnect(ctx, conn)
		}
	}()
	return nil
}

func (a *Agent) proxyConnect(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	log := ctrl.LoggerFrom(ctx)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	reader := bufio.NewReader(conn)
	req, err := http.ReadRequest(reader)
	if err != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	if req.Method != http.MethodConnect {
		fmt.Fprintf(conn, "HTTP/1.1 405 Method Not Allowed\r\n\r\n")
		return
	}
	target, err := a.translate(req.Host)
	if err != nil {
		log.V(2).Info("Refusing egress", "destination", req.Host, "reason", err.Error())
		fmt.Fprintf(conn, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n\r\n%s\n", err)
		return
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	backend, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		fmt.Fprintf(conn, "HTTP/1.1 503 Service Unavailable\r\n\r\n")
		return
	}
	defer backend.Close()
	fmt.Fprintf(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{}, 2)
	go func() {
		// What the API server sent after its request line is already in the reader.
		_, _ = io.Copy(backend, reader)
		done <- struct{}{}
	}()
	go func() { _, _ = io.Copy(conn, backend); done <- struct{}{} }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// translate maps a network host:port of this cluster to its loopback host:port.
func (a *Agent) translate(hostPort string) (string, error) {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return "", err
	}
	ip, err := a.loopback(host)
	if err != nil {
		return "", errors.New("the local runtime only reaches nodes and pods of this cluster: " + err.Error())
	}
	return net.JoinHostPort(ip, port), nil
}

// loopback translates an address of the cluster with the newest spec: the infrastructure
// provider adds nodes to a running cluster, so a miss re-reads the spec once.
func (a *Agent) loopback(host string) (string, error) {
	spec := a.latest.Load()
	if spec == nil {
		spec = a.spec
	}
	ip, err := spec.Loopback(host)
	if err == nil || spec.Owner == nil {
		return ip, err
	}
	fresh, rerr := cluster.ReadSpec(a.dirs)
	if rerr != nil {
		return "", err
	}
	a.latest.Store(fresh)
	return fresh.Loopback(host)
}
