package vsphere

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/internal/test/vcentertest"
)

func TestNodeImage(t *testing.T) {
	img, err := NodeImage("v1.35.4+vmware.1-tkg.1", "ubuntu-20.04")
	if err != nil {
		t.Fatal(err)
	}
	// As the catalogue's OSImage names it (packages/tkr) and TKG names its VMs.
	if img.OVAVersion != "v1.35.4+vmware.1-tkg.1-ubuntu-2004" || img.Name != "ubuntu-2004-kube-v1.35.4+vmware.1" {
		t.Errorf("got %+v", img)
	}
	for _, tc := range []struct{ release, os, want string }{
		{"v1.35", "ubuntu-20.04", `invalid --kubernetes-release "v1.35"`},
		{"v1.35.4+vmware.1-tkg.1", "windows", `invalid --os "windows": use ubuntu-20.04 or photon-3`},
	} {
		if _, err := NodeImage(tc.release, tc.os); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: got %v, want %q", tc.release, tc.os, err, tc.want)
		}
	}
}

func TestImportOVA(t *testing.T) {
	s := vcentertest.Start(t)
	dir := t.TempDir()
	ovaPath := filepath.Join(dir, "node.ova")
	f, err := os.Create(ovaPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BuildOVA(f, "v1.34.3+vmware.1-tkg.1", "photon-3"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	config := func(t *testing.T, extra string) string {
		path := filepath.Join(t.TempDir(), "vc.yaml")
		data := fmt.Sprintf("VSPHERE_SERVER: %s\nVSPHERE_USERNAME: %s\nVSPHERE_PASSWORD: s3cret\nVSPHERE_DATACENTER: /dc0\n%s", s.URL.Host, s.Username, extra)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	complete := fmt.Sprintf("VSPHERE_TLS_THUMBPRINT: %s\nVSPHERE_FOLDER: folder0\nVSPHERE_RESOURCE_POOL: rp0\nVSPHERE_DATASTORE: sharedVmfs-0\nVSPHERE_NETWORK: VM Network\n", s.Thumbprint)

	for _, tc := range []struct{ name, extra, want string }{
		{"no target", "VSPHERE_TLS_THUMBPRINT: " + s.Thumbprint + "\n", "missing configuration variables for the import: VSPHERE_DATASTORE, VSPHERE_FOLDER, VSPHERE_RESOURCE_POOL"},
		{"no thumbprint", "VSPHERE_FOLDER: folder0\nVSPHERE_RESOURCE_POOL: rp0\nVSPHERE_DATASTORE: sharedVmfs-0\n", "VSPHERE_TLS_THUMBPRINT is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ImportOVA(t.Context(), ImportOptions{File: config(t, tc.extra), OVA: ovaPath}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	got, err := ImportOVA(t.Context(), ImportOptions{File: config(t, complete), OVA: ovaPath})
	if err != nil {
		t.Fatal(err)
	}
	if got != "/dc0/vm/folder0/photon-3-kube-v1.34.3+vmware.1" {
		t.Errorf("imported as %s", got)
	}
}
