package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/client/managementcluster"
	"github.com/slipway-dev/slipway/internal/config"
	localcluster "github.com/slipway-dev/slipway/internal/local/cluster"
)

// installer is a test server and a browser-like client that opened its URL.
type installer struct {
	srv    *Server
	ts     *httptest.Server
	client *http.Client
	home   string
}

func newInstaller(t *testing.T, create CreateFunc) *installer {
	t.Helper()
	home := t.TempDir()
	return newInstallerWith(t, Options{Home: home, Store: localcluster.Store{Root: filepath.Join(home, "clusters")}, Create: create,
		Now: func() time.Time { return time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC) }})
}

// newInstallerWith serves an installer of the options on a loopback port and opens its URL.
func newInstallerWith(t *testing.T, o Options) *installer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(t.Context(), l.Addr(), o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Listener.Close()
	ts.Listener = l
	ts.Start()
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	in := &installer{srv: srv, ts: ts, client: &http.Client{Jar: jar}, home: o.Home}
	// Opening the printed URL sets the token's cookie and leaves the address bar.
	res, err := in.client.Get(srv.URL(l.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Request.URL.RawQuery != "" {
		t.Fatalf("opening the printed URL: %s at %s", res.Status, res.Request.URL)
	}
	return in
}

// call sends a request as the installer's page does (its Origin, the cookie).
func (in *installer) call(t *testing.T, method, path string, body any, into any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		r = strings.NewReader(string(data))
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, in.ts.URL+path, r)
	req.Header.Set("Origin", in.ts.URL)
	res, err := in.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if into != nil {
		if err := json.NewDecoder(res.Body).Decode(into); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, res.Status, err)
		}
	}
	return res.StatusCode
}

// TestOnlyTheInstallersPage: without the token, from another Origin, or for another Host (DNS
// rebinding), nothing is served; no CORS header ever is.
func TestOnlyTheInstallersPage(t *testing.T) {
	in := newInstaller(t, nil)
	for _, tc := range []struct {
		name         string
		header       map[string]string
		cookie, want bool
		status       int
	}{
		{name: "no token", status: http.StatusUnauthorized},
		{name: "a wrong token", header: map[string]string{"X-Slipway-Token": "0123"}, status: http.StatusUnauthorized},
		{name: "another Origin", cookie: true, header: map[string]string{"Origin": "http://evil.example.com"}, status: http.StatusForbidden},
		{name: "another Host", cookie: true, header: map[string]string{"Host": "evil.example.com"}, status: http.StatusForbidden},
		{name: "the page itself", cookie: true, status: http.StatusOK},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, in.ts.URL+"/api/options", nil)
		for k, v := range tc.header {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		client := http.DefaultClient
		if tc.cookie {
			client = in.client
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("%s: %s, want %d", tc.name, res.Status, tc.status)
		}
		for k := range res.Header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("%s: CORS header %s sent", tc.name, k)
			}
		}
	}
	// A POST from another page is refused even with the cookie a browser would attach.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, in.ts.URL+"/api/deploy", strings.NewReader(`{"variables":{}}`))
	req.Header.Set("Origin", "http://127.0.0.1:1")
	res, err := in.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("a deploy from another Origin: %s", res.Status)
	}
	if in.srv.current() != nil {
		t.Error("a deploy from another Origin started")
	}
}

func TestCheckBind(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:8080": true, "[::1]:8080": true, "localhost:8080": true, "0.0.0.0:8080": false, "10.1.2.3:80": false, "8080": false} {
		if err := CheckBind(addr, false); (err == nil) != ok {
			t.Errorf("CheckBind(%s) = %v, want ok %v", addr, err, ok)
		}
	}
	if err := CheckBind("0.0.0.0:8080", true); err != nil {
		t.Errorf("with --bind-remote: %v", err)
	}
}

// TestValidationAtTheField: the configuration package's messages come back under the variable
// they name, as the CLI prints them.
func TestValidationAtTheField(t *testing.T) {
	in := newInstaller(t, nil)
	var got checked
	in.call(t, http.MethodPost, "/api/validate", configRequest{Variables: map[string]string{
		config.ClusterPlan: "huge", config.InfrastructureProvider: "local", config.WorkerMachineCount0: "x", config.LocalNodeRuntime: "agent"}}, &got)
	if msgs := got.Errors[config.ClusterPlan]; len(msgs) != 1 || !strings.Contains(msgs[0], "huge") {
		t.Errorf("CLUSTER_PLAN's errors %v (all: %+v)", msgs, got)
	}
	// A variable the page has no field for still gets its errors under its name.
	if msgs := got.Errors[config.LocalNodeRuntime]; len(msgs) != 1 || !strings.Contains(msgs[0], `"agent"`) {
		t.Errorf("LOCAL_NODE_RUNTIME's errors %v (all: %+v)", msgs, got)
	}
	if msgs := got.Errors[config.WorkerMachineCount0]; len(msgs) != 1 {
		t.Errorf("WORKER_MACHINE_COUNT_0's errors %v, not filed under WORKER_MACHINE_COUNT (all: %+v)", msgs, got)
	}
	got = checked{}
	in.call(t, http.MethodPost, "/api/validate", configRequest{Variables: map[string]string{config.InfrastructureProvider: "local", "NOT_A_VARIABLE": "1"}}, &got)
	if len(got.Errors) != 0 || len(got.General) != 1 || !strings.Contains(got.General[0], "NOT_A_VARIABLE") {
		t.Errorf("an unknown variable: %+v", got)
	}
}

// TestReviewIsTheCommandsConfiguration: the review's file, read as the command it shows reads
// it, completes to the same cluster as the wizard's variables; a file imported gives the same
// variables back.
func TestReviewIsTheCommandsConfiguration(t *testing.T) {
	in := newInstaller(t, nil)
	vars := map[string]string{config.InfrastructureProvider: "local", config.ClusterPlan: "prod", config.WorkerMachineCount: "2"}
	var got reviewed
	if status := in.call(t, http.MethodPost, "/api/review", configRequest{Variables: vars}, &got); status != http.StatusOK {
		t.Fatalf("review: %d %+v", status, got)
	}
	if got.Command != "slipway management-cluster create -f "+got.Path || filepath.Dir(got.Path) != filepath.Join(in.home, "clusterconfigs") {
		t.Errorf("command %q for file %s", got.Command, got.Path)
	}
	saved, err := os.ReadFile(got.Path)
	if err != nil || string(saved) != got.File {
		t.Fatalf("the saved file (%v):\n%s\nwant the review's:\n%s", err, saved, got.File)
	}
	defaults := config.Defaults{KubernetesVersion: "v1.35.4", Now: in.srv.o.Now()}
	fromFile, err := config.Read(got.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := config.Complete(fromFile, config.Management, defaults, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	fromWizard := config.NewVariables()
	for k, v := range vars {
		fromWizard.Set(k, v)
	}
	b, err := config.Complete(fromWizard, config.Management, defaults, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("the command's configuration:\n%s\nthe wizard's:\n%s", ja, jb)
	}
	var imported struct{ Variables map[string]string }
	in.call(t, http.MethodPost, "/api/import", map[string]string{"file": got.File}, &imported)
	for k, v := range vars {
		if imported.Variables[k] != v {
			t.Errorf("imported %s = %q, want %q", k, imported.Variables[k], v)
		}
	}
	var bad map[string]string
	if status := in.call(t, http.MethodPost, "/api/import", map[string]string{"file": "kind: Cluster\n"}, &bad); status != http.StatusUnprocessableEntity || bad["error"] == "" {
		t.Errorf("importing an object: %d %v", status, bad)
	}
}

// events reads a deploy's server-sent events until end, or until stop says so.
func events(t *testing.T, in *installer, stop func(event, data string) bool) (lines []string, last status) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, in.ts.URL+"/api/deploy/log", nil)
	res, err := in.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := strings.TrimPrefix(line, "data: ")
			switch event {
			case "line":
				lines = append(lines, data)
			case "status":
				last = status{}
				if err := json.Unmarshal([]byte(data), &last); err != nil {
					t.Fatal(err)
				}
			case "end":
				return lines, last
			}
			if stop != nil && stop(event, data) {
				return lines, last
			}
		}
	}
	t.Fatalf("the stream ended without its end event: %v", sc.Err())
	return nil, status{}
}

// TestDeployLogReplays: the deploy runs the create flow with the saved file; a page opened in
// the middle of it (a reload, a second tab) gets the whole log from the first line; a failed run
// shows its step and cause, and only one deploy runs at a time.
func TestDeployLogReplays(t *testing.T) {
	release := make(chan struct{})
	var file, existing string
	create := func(ctx context.Context, o managementcluster.CreateOptions) (*managementcluster.Result, error) {
		file, existing = o.File, o.UseExistingBootstrap
		// The bootstrap cluster's own steps (a Detail printer's) are parts of the first step: the
		// page lists the flow's two.
		if err := o.Progress.Step("bootstrap cluster", func() error {
			o.Progress.Infof("Creating bootstrap cluster...")
			return o.Progress.Detail().Step("Preparing nodes", func() error { return nil })
		}); err != nil {
			return nil, err
		}
		err := o.Progress.Step("move", func() error {
			o.Progress.Infof("Moving all Cluster API objects")
			<-release
			return errors.New("the API server went away")
		})
		e := &managementcluster.Error{Step: "move", Err: errors.Unwrap(err)}
		if o.UseExistingBootstrap == "" {
			// As the flow: a run on a given bootstrap cluster (-e) keeps none of its own.
			e.Bootstrap, e.BootstrapName = "/tmp/boot.kubeconfig", "tkg-kind-x"
		}
		return nil, e
	}
	in := newInstaller(t, create)
	var got reviewed
	if status := in.call(t, http.MethodPost, "/api/deploy", configRequest{Variables: map[string]string{config.InfrastructureProvider: "local", config.ClusterName: "ui-mc"}}, &got); status != http.StatusAccepted {
		t.Fatalf("deploy: %d %+v", status, got)
	}
	// A first page follows until the move runs.
	first, _ := events(t, in, func(event, data string) bool { return event == "line" && strings.Contains(data, "Moving") })
	var conflict map[string]string
	if status := in.call(t, http.MethodPost, "/api/deploy", configRequest{Variables: map[string]string{config.InfrastructureProvider: "local"}}, &conflict); status != http.StatusConflict {
		t.Errorf("a second deploy while one runs: %d %v", status, conflict)
	}
	close(release)
	// A page opened afterwards, a reload, gets everything from the start.
	lines, last := events(t, in, nil)
	if len(lines) < len(first) || strings.Join(lines[:len(first)], "\n") != strings.Join(first, "\n") || !strings.HasPrefix(lines[0], "Logs of the command execution can also be found at: ") {
		t.Errorf("the replayed log:\n%s\nwant it to begin with what the first page saw:\n%s", strings.Join(lines, "\n"), strings.Join(first, "\n"))
	}
	if file != filepath.Join(in.home, "clusterconfigs", "ui-mc.yaml") {
		t.Errorf("the flow ran %s, not the saved file", file)
	}
	if last.State != stateFailed || last.Failure == nil || last.Failure.Step != "move" || last.Failure.Cause != "the API server went away" ||
		last.Failure.BootstrapName != "tkg-kind-x" || len(last.Steps) != 2 || last.Steps[0].State != "done" || last.Steps[1].State != stateFailed {
		t.Errorf("the status after the failure: %+v (failure %+v)", last, last.Failure)
	}
	// Resume runs the flow again on the kept bootstrap cluster; failing again, it keeps the
	// ways out on that cluster.
	var resumed map[string]string
	if status := in.call(t, http.MethodPost, "/api/deploy/resume", nil, &resumed); status != http.StatusAccepted || resumed["resumed"] != "tkg-kind-x" {
		t.Fatalf("resume: %d %v", status, resumed)
	}
	_, last = events(t, in, nil)
	if existing != "/tmp/boot.kubeconfig" || last.State != stateFailed || last.Failure == nil || last.Failure.BootstrapName != "tkg-kind-x" {
		t.Errorf("the resumed run on %q ended %+v (failure %+v), want a failure keeping tkg-kind-x", existing, last, last.Failure)
	}
	// Clean-up names the cluster it could not find.
	var cleanup map[string]string
	if status := in.call(t, http.MethodPost, "/api/deploy/cleanup", nil, &cleanup); status != http.StatusInternalServerError || !strings.Contains(cleanup["error"], "tkg-kind-x") {
		t.Errorf("cleanup of a bootstrap cluster that is not there: %d %v", status, cleanup)
	}
}
