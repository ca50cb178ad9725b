package podenv

import (
	"os"
	"path/filepath"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
)

func TestPodPathTranslatesMounts(t *testing.T) {
	p := Pod{Dir: "/pods/x", Mounts: map[string]string{
		"/var/run/secrets/kubernetes.io/serviceaccount": "/pods/x/volumes/token",
		"/tmp/k8s-webhook-server/serving-certs":         "/pods/x/volumes/cert",
		"/etc/config":                                   "/pods/x/volumes/config",
		"/etc/config/nested":                            "/pods/x/volumes/nested",
	}}
	for in, want := range map[string]string{
		"/var/run/secrets/kubernetes.io/serviceaccount/token": "/pods/x/volumes/token/token",
		"/tmp/k8s-webhook-server/serving-certs":               "/pods/x/volumes/cert",
		"/etc/config/nested/file":                             "/pods/x/volumes/nested/file",
		"/etc/configuration":                                  filepath.Join("/pods/x/root", "/etc/configuration"),
	} {
		if got := p.Path(in); got != want {
			t.Errorf("Path(%s) = %s, want %s", in, got, want)
		}
	}
	if got := (Pod{}).Path("/etc/x"); got != "/etc/x" {
		t.Errorf("outside the local runtime a path is kept, got %s", got)
	}
	if got := (Pod{IP: "127.1.1.2"}).BindAddress(":9443"); got != "127.1.1.2:9443" {
		t.Errorf("BindAddress = %s", got)
	}
	if got := (Pod{IP: "127.1.1.2"}).BindAddress("0"); got != "0" {
		t.Errorf("BindAddress(0) = %s, want it off", got)
	}
}

func TestCurrentConfigIsWhatGetConfigFinds(t *testing.T) {
	dir := t.TempDir()
	sa := filepath.Join(dir, "sa")
	if err := os.MkdirAll(sa, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"token", "ca.crt"} {
		if err := os.WriteFile(filepath.Join(sa, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(EnvPodDir, dir)
	t.Setenv(EnvMounts, `{"`+serviceAccountDir+`":"`+sa+`"}`)
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	t.Setenv("KUBECONFIG", "")
	_, cfg, err := CurrentConfig()
	if err != nil {
		t.Fatal(err)
	}
	found, err := ctrl.GetConfig()
	if err != nil {
		t.Fatalf("controller-runtime does not find the pod's configuration: %v", err)
	}
	if found.Host != cfg.Host || found.BearerTokenFile != cfg.BearerTokenFile || found.CAFile != cfg.CAFile {
		t.Errorf("GetConfig found host %s, token %s, CA %s; want %s, %s, %s", found.Host, found.BearerTokenFile, found.CAFile, cfg.Host, cfg.BearerTokenFile, cfg.CAFile)
	}
}
