package e2e

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// portForwardGet forwards a local port to a pod's port through the API server and the node's
// kubelet API, as `kubectl port-forward` does, and GETs path over HTTPS with etcd's
// health-check client certificate.
func portForwardGet(t *testing.T, lc *localCluster, namespace, pod string, port int, path string) string {
	t.Helper()
	transport, upgrader, err := spdy.RoundTripperFor(lc.config)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(lc.config.Host)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/portforward", namespace, pod)
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	localPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("%d:%d", localPort, port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	go func() { errs <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errs:
		t.Fatalf("port-forward: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("port-forward not ready")
	}
	spec, err := readSpec(lc)
	if err != nil {
		t.Fatal(err)
	}
	pkiDir := lc.dirs.NodePKI(spec.ControlPlane()[0].Name)
	cert, err := tls.LoadX509KeyPair(filepath.Join(pkiDir, "etcd/healthcheck-client.crt"), filepath.Join(pkiDir, "etcd/healthcheck-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates:       []tls.Certificate{cert},
		ServerName:         "localhost", // etcd's serving certificate names localhost, as kubeadm's does
		InsecureSkipVerify: true,        //nolint:gosec // the chain is etcd's own CA; only the path is under test
	}}}
	resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d%s", localPort, path))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(body))
}
