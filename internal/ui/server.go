// Package ui is the installer UI of `slipway management-cluster create --ui`, TKG's kickstart
// UI, and of `slipway ui`, its workload-cluster counterpart: a web server on loopback serving a wizard (web/, embedded in the binary), which checks
// every field by the configuration package's rules as the user leaves it, shows the flat
// configuration file and the equivalent command, and runs the same create flow as the CLI in
// this process, its steps and its whole log streamed to every page that asks, from the start.
//
// Nothing else on the host can drive it: every request carries the per-run token the command
// prints (a cookie once the page is opened), a request from another Origin or for another Host
// is refused, and no CORS header is ever sent.
package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/client/cluster"
	"github.com/slipway-dev/slipway/internal/client/managementcluster"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/progress"
)

//go:embed web
var web embed.FS

// tokenCookie begins the name of the cookie that carries the token once the page is opened
// with it; the port ends it, since cookies do not tell two installers of one host apart.
const tokenCookie = "slipway-installer-token-"

// CreateFunc runs the management cluster's create flow: managementcluster.Create, or a test's.
type CreateFunc func(context.Context, managementcluster.CreateOptions) (*managementcluster.Result, error)

// Options configure a Server.
type Options struct {
	// Home is slipway's home: the configuration files go to its clusterconfigs/, the logs to
	// its logs/.
	Home string
	// Store holds the bootstrap cluster, which a failed run's clean-up deletes.
	Store localcluster.Store
	// Create is the flow a deploy runs; nil is managementcluster.Create.
	Create CreateFunc
	// Base are the create options every deploy starts from (kubeconfig, timeout, package
	// repository); the file, the progress printer and the bootstrap cluster are the server's.
	Base managementcluster.CreateOptions
	// Log receives every line of every deploy too, as the terminal of the command.
	Log io.Writer
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Remote says the installer serves beyond this host (--bind-remote): any Host is answered,
	// the token being the guard.
	Remote bool
	// Workload, when set, makes the server `slipway ui`'s: pointed at a management cluster, it
	// lists its workload clusters and its wizard creates one with `cluster create`'s flow.
	Workload *Workload
}

// Workload is the management cluster `slipway ui` serves.
type Workload struct {
	// Client reaches the management cluster.
	Client client.Client
	// Create is the flow a deploy runs; nil is cluster.Create.
	Create func(context.Context, cluster.CreateOptions) error
	// CheckHost checks that this host can start a local cluster's nodes, as `cluster create`.
	CheckHost cluster.HostCheck
	// Timeout bounds each wait of a deploy.
	Timeout time.Duration
	// Environ overrides the wizard's file, as `cluster create` reads the environment
	// (TKG_CUSTOM_IMAGE_REPOSITORY among it).
	Environ []string
	// StandIns are the digests of the stand-in images (images.StandInDigests), by which the
	// list tells a stand-in copied into one repository, which keeps no path.
	StandIns map[string]bool
}

// Server serves the installer.
type Server struct {
	o     Options
	token string
	// hosts are the Host headers the server answers to: its address, and localhost's name for
	// it on loopback (a DNS-rebinding page has another); nil answers any (Options.Remote).
	hosts map[string]bool
	// cookie is the token cookie's name, with the server's port.
	cookie  string
	handler http.Handler

	mu sync.Mutex
	// run is the current or last deploy.
	run *deployment
	// cleaning says a failed run's bootstrap cluster is being deleted: no deploy starts then.
	cleaning bool
	// ctx bounds the deploys: the server's lifetime.
	ctx context.Context
}

// New returns a server for the address it will listen on, with a new token.
func New(ctx context.Context, addr net.Addr, o Options) (*Server, error) {
	if o.Create == nil {
		o.Create = managementcluster.Create
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Workload != nil && o.Workload.Create == nil {
		o.Workload.Create = cluster.Create
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	s := &Server{o: o, token: hex.EncodeToString(b), hosts: map[string]bool{addr.String(): true}, ctx: ctx, cookie: tokenCookie}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		s.cookie += strconv.Itoa(tcp.Port)
		if tcp.IP.IsLoopback() {
			s.hosts[fmt.Sprintf("localhost:%d", tcp.Port)] = true
		}
	}
	if o.Remote {
		s.hosts = nil
	}
	static, err := fs.Sub(web, "web")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(static))
	mux.HandleFunc("GET /api/options", s.options)
	mux.HandleFunc("POST /api/validate", s.validate)
	mux.HandleFunc("POST /api/review", s.review)
	mux.HandleFunc("POST /api/import", s.importFile)
	mux.HandleFunc("POST /api/vsphere", s.vsphere)
	mux.HandleFunc("GET /api/clusters", s.clusters)
	mux.HandleFunc("POST /api/deploy", s.deploy)
	mux.HandleFunc("GET /api/deploy", s.deployState)
	mux.HandleFunc("GET /api/deploy/log", s.deployLog)
	mux.HandleFunc("POST /api/deploy/resume", s.resume)
	mux.HandleFunc("POST /api/deploy/cleanup", s.cleanup)
	s.handler = s.guard(mux)
	return s, nil
}

// URL is the address to open, with the token: a wildcard address is named by this host's name.
func (s *Server) URL(addr net.Addr) string {
	host := addr.String()
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		if name, err := os.Hostname(); err == nil {
			host = net.JoinHostPort(name, strconv.Itoa(tcp.Port))
		}
	}
	return "http://" + host + "/?token=" + url.QueryEscape(s.token)
}

// ServeHTTP serves a request once the guard let it through.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// guard refuses what does not come from the installer's own page: another Host (DNS
// rebinding), another Origin, no token. The page is opened once with ?token=, which becomes a
// same-site, script-proof cookie and leaves the address bar.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if s.hosts != nil && !s.hosts[r.Host] {
			http.Error(w, fmt.Sprintf("host %q is not this installer's address: open the URL the command printed", r.Host), http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && origin != "http://"+r.Host {
			http.Error(w, fmt.Sprintf("origin %q is not this installer's page: requests from other pages are refused", origin), http.StatusForbidden)
			return
		}
		if q := r.URL.Query().Get("token"); q != "" && r.URL.Path == "/" {
			if !s.validToken(q) {
				http.Error(w, "the token is not this run's: open the URL the command printed", http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		token := r.Header.Get("X-Slipway-Token")
		if c, err := r.Cookie(s.cookie); err == nil && token == "" {
			token = c.Value
		}
		if !s.validToken(token) {
			http.Error(w, "no valid token: open the URL the installer's command printed (it carries the token)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) validToken(t string) bool {
	return t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError answers a JSON error, as every API call does.
func apiError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

// readJSON reads a request body of at most 1 MiB into v.
func readJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the request is not the JSON the installer sends: %w", err)
	}
	return nil
}

// Run serves the installer on bind (checked by CheckBind) until ctx ends; announce is told the
// URL to open, with its token, once the server listens.
func Run(ctx context.Context, bind string, remote bool, o Options, announce func(url string)) error {
	if err := CheckBind(bind, remote); err != nil {
		return err
	}
	l, err := net.Listen("tcp", bind)
	if err != nil {
		return fmt.Errorf("--bind %s: %w: choose another port", bind, err)
	}
	o.Remote = remote
	s, err := New(ctx, l.Addr(), o)
	if err != nil {
		l.Close()
		return err
	}
	// The libraries' logs (client-go, controller-runtime) of every deploy go to one file; the
	// process-wide loggers are set once.
	logFile, err := progress.NewLogFile(filepath.Join(o.Home, "logs"), "installer-", s.o.Now())
	if err != nil {
		l.Close()
		return err
	}
	libraries, err := progress.New(io.Discard, 0, logFile)
	if err != nil {
		l.Close()
		return err
	}
	defer libraries.Close()
	libraries.RouteLibraryLogs()
	announce(s.URL(l.Addr()))
	return s.Serve(ctx, l)
}

// Serve serves on l until ctx ends.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	// Interrupted during a deploy, the flow ends with its failure, the kept bootstrap cluster and
	// the ways out printed, as the command's own.
	if d := s.current(); d != nil {
		d.wait()
	}
	return nil
}

// CheckBind refuses an address beyond this host unless remote is set: the installer takes
// vCenter passwords and creates clusters, and the token is then its only guard.
func CheckBind(addr string, remote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--bind %q: %w: write host:port, such as 127.0.0.1:8080", addr, err)
	}
	if remote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--bind %s is not a loopback address: the installer serves this host only (127.0.0.1 or ::1); "+
			"add --bind-remote to serve it beyond this host, where its token is its only guard", addr)
	}
	return nil
}
