package cluster

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
	"github.com/slipway-dev/slipway/internal/test/vcentertest"
	"github.com/slipway-dev/slipway/internal/vsphere/simulator"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// TestCreateOnVSphereChecksThePrerequisitesFirst runs cluster create against the vCenter
// simulator: a wrong inventory name or a missing template stops it before anything is created,
// and a passing check writes the inventory's full paths into the Cluster.
func TestCreateOnVSphereChecksThePrerequisitesFirst(t *testing.T) {
	vc := vcentertest.Start(t)

	const ova = "v1.35.4+vmware.1-tkg.1-ubuntu-2004"
	tkr := &runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: "v1.35.4---vmware.1-tkg.1"}}
	tkr.Spec.Version = "v1.35.4+vmware.1-tkg.1"
	tkr.Spec.OSImages = []corev1.LocalObjectReference{{Name: "ubuntu-ova"}}
	tkr.Status.Conditions = runv1alpha3.Conditions{{Type: runv1alpha3.ConditionReady, Status: corev1.ConditionTrue}}
	img := &runv1alpha3.OSImage{ObjectMeta: metav1.ObjectMeta{Name: "ubuntu-ova"}}
	img.Spec.OS = runv1alpha3.OSInfo{Type: "linux", Name: "ubuntu", Version: "20.04", Arch: "amd64"}
	img.Spec.Image.Type = "ova"
	img.Spec.Image.Ref = runv1alpha3.JSONObject{"version": ova}
	pinniped := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: "pinniped-info"}}

	file := func(t *testing.T, datastore string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "wc.yaml")
		vars := fmt.Sprintf(`CLUSTER_NAME: tkg-vc-antrea
CLUSTER_PLAN: dev
INFRASTRUCTURE_PROVIDER: vsphere
KUBERNETES_VERSION: v1.35.4
VSPHERE_SERVER: %s
VSPHERE_USERNAME: %s
VSPHERE_PASSWORD: s3cret
VSPHERE_TLS_THUMBPRINT: %s
VSPHERE_DATACENTER: dc0
VSPHERE_NETWORK: VM Network
VSPHERE_RESOURCE_POOL: rp0
VSPHERE_DATASTORE: %s
VSPHERE_FOLDER: folder0
VSPHERE_CONTROL_PLANE_ENDPOINT: 198.18.255.11
VSPHERE_SSH_AUTHORIZED_KEY: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfcGigZ63XnMoqRl2PKwyhzQ6ChfGxQJhqvD/5SujkZ capv@example
`, vc.URL.Host, vc.Username, vc.Thumbprint, datastore)
		if err := os.WriteFile(path, []byte(vars), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	run := func(t *testing.T, path string, dryRun bool) (client.Client, string, string, error) {
		c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tkr, img, pinniped).Build()
		var lines, out bytes.Buffer
		err := Create(t.Context(), CreateOptions{File: path, Client: c, Home: t.TempDir(), DryRun: dryRun, Out: &out, Progress: progress.ForWriter(&lines)})
		return c, lines.String(), out.String(), err
	}
	nothingCreated := func(t *testing.T, c client.Client) {
		t.Helper()
		clusters := &clusterv1.ClusterList{}
		secrets := &corev1.SecretList{}
		if err := c.List(t.Context(), clusters); err != nil || len(clusters.Items) > 0 {
			t.Errorf("clusters were created: %d (%v)", len(clusters.Items), err)
		}
		if err := c.List(t.Context(), secrets); err != nil || len(secrets.Items) > 0 {
			t.Errorf("secrets were created: %d (%v)", len(secrets.Items), err)
		}
	}

	t.Run("a datastore that does not exist", func(t *testing.T) {
		c, _, _, err := run(t, file(t, "ds9"), false)
		if err == nil || !strings.Contains(err.Error(), `configuration validation failed: invalid VSPHERE_DATASTORE "ds9": it is not found in datacenter /dc0: use one of /dc0/datastore/sharedVmfs-0`) {
			t.Fatalf("got %v", err)
		}
		nothingCreated(t, c)
	})
	t.Run("no template of the release", func(t *testing.T) {
		c, _, _, err := run(t, file(t, "sharedVmfs-0"), false)
		if err == nil || !strings.Contains(err.Error(), "unable to find VM Template associated with TanzuKubernetesRelease v1.35.4+vmware.1-tkg.1. Please upload at least one VM Template from versions ["+ova+"]") {
			t.Fatalf("got %v", err)
		}
		nothingCreated(t, c)
	})
	t.Run("everything there", func(t *testing.T) {
		login, err := vc.Login(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := vcenter.CreateNodeTemplate(t.Context(), login.Client, vcenter.NodeTemplate{
			Name: "ubuntu-2004-kube-v1.35.4", Folder: simulator.Folder, ResourcePool: simulator.ResourcePool, Datastore: simulator.Datastore,
			OVAVersion: ova, Distro: vcenter.OS{Name: "ubuntu", Version: "20.04", Arch: "amd64"},
		}); err != nil {
			t.Fatal(err)
		}
		c, lines, out, err := run(t, file(t, "sharedVmfs-0"), true)
		if err != nil {
			t.Fatalf("%v\n%s", err, lines)
		}
		if !strings.Contains(lines, `Setting config variable "VSPHERE_DATASTORE" to value "/dc0/datastore/sharedVmfs-0"`) ||
			strings.Contains(lines, "vSphere 7.0 Environment Detected") {
			t.Errorf("lines:\n%s", lines)
		}
		for _, path := range []string{simulator.Datacenter, simulator.Datastore, simulator.ResourcePool, simulator.Folder, simulator.Network} {
			if !strings.Contains(out, path) {
				t.Errorf("the Cluster does not carry %s:\n%s", path, out)
			}
		}
		nothingCreated(t, c)
	})
}
