package node

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubelet/pkg/cri/streaming/portforward"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/local/cluster"
)

// kubeletServer serves the part of the kubelet API the API server calls: container logs and
// port-forwarding.
type kubeletServer struct {
	agent *Agent
}

func (s *kubeletServer) serve(ctx context.Context) error {
	pkiDir := s.agent.dirs.NodePKI(s.agent.node.Name)
	cert, err := tls.LoadX509KeyPair(filepath.Join(pkiDir, "kubelet.crt"), filepath.Join(pkiDir, "kubelet.key"))
	if err != nil {
		return fmt.Errorf("failed to load the kubelet serving certificate: %w", err)
	}
	caPEM, err := os.ReadFile(filepath.Join(pkiDir, "ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/containerLogs/{namespace}/{pod}/{container}", s.authorized(s.containerLogs))
	mux.HandleFunc("/portForward/{namespace}/{pod}", s.authorized(s.portForward))
	mux.HandleFunc("/portForward/{namespace}/{pod}/{uid}", s.authorized(s.portForward))
	for _, p := range []string{"/exec/", "/attach/", "/run/"} {
		mux.HandleFunc(p, s.authorized(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "the slipway local runtime does not run containers, so it cannot exec or attach into them", http.StatusNotImplemented)
		}))
	}
	server := &http.Server{
		Addr:              net.JoinHostPort(s.agent.node.IP, strconv.Itoa(cluster.KubeletPort)),
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			ClientAuth:   tls.VerifyClientCertIfGiven,
			ClientCAs:    pool,
			MinVersion:   tls.VersionTLS12,
		},
	}
	go func() {
		<-ctx.Done()
		_ = server.Close()
	}()
	if err := server.ListenAndServeTLS("", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("kubelet API: %w", err)
	}
	return nil
}

// authorized lets through requests whose client certificate the cluster CA signed, such as the
// API server's kubelet client.
func (s *kubeletServer) authorized(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		h(w, r)
	}
}

// logFile returns the log of a container of a pod on this node.
func (s *kubeletServer) logFile(namespace, pod, container string, previous bool) (string, *podWorker, error) {
	for _, sp := range s.agent.staticPods {
		if namespace == "kube-system" && pod == mirrorPodName(sp.component.name, s.agent.node.Name) && container == sp.component.name {
			return filepath.Join(s.agent.dirs.NodeLogs(s.agent.node.Name), sp.component.name+".log"), nil, nil
		}
	}
	w := s.agent.pods.worker(namespace, pod)
	if w == nil {
		return "", nil, fmt.Errorf("pod %s/%s is not running on node %s", namespace, pod, s.agent.node.Name)
	}
	if previous {
		return w.previousLogPath(container), w, nil
	}
	return w.logPath(container), w, nil
}

func (s *kubeletServer) containerLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	path, worker, err := s.logFile(r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"), q.Get("previous") == "true")
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		http.Error(w, fmt.Sprintf("container %q has no log yet", r.PathValue("container")), http.StatusNotFound)
		return
	}
	defer f.Close()
	if tail, err := strconv.Atoi(q.Get("tailLines")); err == nil && tail >= 0 {
		if err := seekTail(f, tail); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	var out io.Writer = w
	if limit, err := strconv.ParseInt(q.Get("limitBytes"), 10, 64); err == nil && limit > 0 {
		out = &limitWriter{w: w, left: limit}
	}
	w.Header().Set("Content-Type", "text/plain")
	flusher, _ := w.(http.Flusher)
	follow := q.Get("follow") == "true"
	reader := bufio.NewReader(f)
	for {
		n, err := io.Copy(out, reader)
		if flusher != nil && n > 0 {
			flusher.Flush()
		}
		if err != nil || !follow {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		if worker != nil {
			select {
			case <-worker.gone:
				return
			default:
			}
		}
	}
}

// seekTail positions f at the start of its last n lines.
func seekTail(f *os.File, n int) error {
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	offset := len(data)
	if n > 0 {
		offset = 0
		count := 0
		for i := end - 1; i >= 0; i-- {
			if data[i] == '\n' {
				if count++; count == n {
					offset = i + 1
					break
				}
			}
		}
	}
	_, err = f.Seek(int64(offset), io.SeekStart)
	return err
}

type limitWriter struct {
	w    io.Writer
	left int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.w.Write(p)
	l.left -= int64(n)
	return n, err
}

func (s *kubeletServer) portForward(w http.ResponseWriter, r *http.Request) {
	namespace, pod := r.PathValue("namespace"), r.PathValue("pod")
	ip, err := s.podIP(namespace, pod)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	portforward.ServePortForward(w, r, dialer{ip: ip}, pod, types.UID(r.PathValue("uid")), opts,
		4*time.Hour, 30*time.Second, portforward.SupportedProtocols)
}

func (s *kubeletServer) podIP(namespace, pod string) (string, error) {
	for _, sp := range s.agent.staticPods {
		if namespace == "kube-system" && pod == mirrorPodName(sp.component.name, s.agent.node.Name) {
			return s.agent.node.IP, nil
		}
	}
	if w := s.agent.pods.worker(namespace, pod); w != nil {
		return w.ip, nil
	}
	return "", fmt.Errorf("pod %s/%s is not running on node %s", namespace, pod, s.agent.node.Name)
}

// dialer forwards a port of a pod to the pod's address on this host.
type dialer struct{ ip string }

func (d dialer) PortForward(ctx context.Context, _ string, _ types.UID, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	var nd net.Dialer
	conn, err := nd.DialContext(ctx, "tcp", net.JoinHostPort(d.ip, strconv.Itoa(int(port))))
	if err != nil {
		return fmt.Errorf("failed to dial port %d: %w", port, err)
	}
	defer conn.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(conn, stream); done <- struct{}{} }()
	go func() { _, _ = io.Copy(stream, conn); done <- struct{}{} }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	ctrl.LoggerFrom(ctx).V(4).Info("Port-forward ended", "port", port)
	return nil
}
