package podenv

import (
	"path/filepath"
	"testing"
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
