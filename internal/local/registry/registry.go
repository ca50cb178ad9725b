// Package registry is the OCI registry of the embedded default: go-containerregistry's registry
// served on loopback, and to the local runtime's nodes on the host's bridge address, with blobs
// on disk and every manifest it accepts kept in a journal that is replayed when it starts again,
// so that pushed bundles survive a restart.
package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/local/hostnet"
)

// DefaultAddress is where the embedded default's registry listens.
const DefaultAddress = "127.0.0.1:5000"

// entry is one accepted manifest PUT.
type entry struct {
	Path        string    `json:"path"`
	ContentType string    `json:"contentType"`
	Body        []byte    `json:"body"`
	At          time.Time `json:"at"`
}

// Handler is a registry whose manifests persist in dir.
type Handler struct {
	dir   string
	inner http.Handler
	mu    sync.Mutex
}

// NewHandler returns a registry storing blobs and the manifest journal in dir, with the journal
// replayed.
func NewHandler(dir string) (*Handler, error) {
	for _, d := range []string{filepath.Join(dir, "blobs"), filepath.Join(dir, "manifests")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	h := &Handler{dir: dir, inner: ggcrregistry.New(
		ggcrregistry.WithBlobHandler(ggcrregistry.NewDiskBlobHandler(filepath.Join(dir, "blobs"))),
		ggcrregistry.Logger(stdlog.New(io.Discard, "", 0)),
	)}
	return h, h.replay()
}

func (h *Handler) replay() error {
	files, err := filepath.Glob(filepath.Join(h.dir, "manifests", "*.json"))
	if err != nil {
		return err
	}
	var entries []entry
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var e entry
		if err := json.Unmarshal(data, &e); err != nil {
			return fmt.Errorf("corrupt manifest journal %s: %w", f, err)
		}
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].At.Before(entries[j].At) })
	for _, e := range entries {
		req := httptest.NewRequest(http.MethodPut, e.Path, bytes.NewReader(e.Body))
		req.Header.Set("Content-Type", e.ContentType)
		rec := httptest.NewRecorder()
		h.inner.ServeHTTP(rec, req)
		if rec.Code >= 300 {
			return fmt.Errorf("replaying manifest %s: %d %s", e.Path, rec.Code, rec.Body.String())
		}
	}
	return nil
}

// ServeHTTP serves the registry API and journals accepted manifest PUTs.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/manifests/") {
		h.inner.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	h.inner.ServeHTTP(rec, r)
	if rec.Code < 300 {
		if err := h.journal(entry{Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Body: body, At: time.Now()}); err != nil {
			http.Error(w, "failed to persist the manifest: "+err.Error(), http.StatusInternalServerError)
			return
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (h *Handler) journal(e entry) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(e.Path))
	return os.WriteFile(filepath.Join(h.dir, "manifests", hex.EncodeToString(sum[:])+".json"), data, 0o600)
}

// Serve serves the registry on addr until the context ends. addr must be a loopback address.
// The registry also answers the local runtime's nodes on the host's bridge address, at the same
// port, from the moment the bridge exists: the nodes' containerd pulls from it there.
func Serve(ctx context.Context, addr, dir string) error {
	return serve(ctx, addr, dir, nil)
}

// serve is Serve, telling ready the address it answers nodes on.
func serve(ctx context.Context, addr, dir string, ready func(string)) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("invalid address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("the registry listens only on loopback, not %s: use 127.0.0.1", host)
	}
	h, err := NewHandler(dir)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("port %s is in use: stop what uses it or choose another --address: %w", addr, err)
	}
	server := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	// Closing the server closes both listeners, whichever way serving ends.
	defer server.Close()
	go func() {
		<-ctx.Done()
		_ = server.Close()
	}()
	go serveNodes(ctx, server, l.Addr().(*net.TCPAddr).Port, ready)
	if err := server.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveNodes waits for the host's bridge address to exist, then serves on it at port too.
func serveNodes(ctx context.Context, server *http.Server, port int, ready func(string)) {
	addr := net.JoinHostPort(hostnet.HostAddress.String(), strconv.Itoa(port))
	log := ctrl.LoggerFrom(ctx).WithValues("address", addr)
	var last string
	for ctx.Err() == nil {
		l, err := net.Listen("tcp", addr)
		if err == nil {
			log.Info("Answering the local runtime's nodes")
			if ready != nil {
				ready(addr)
			}
			if err := server.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error(err, "Stopped answering the nodes")
			}
			return
		}
		// Until a node is made, the bridge does not exist: that is said once, as any other
		// reason is.
		if err.Error() != last {
			log.Info("Not answering the nodes yet", "reason", err.Error())
			last = err.Error()
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}
