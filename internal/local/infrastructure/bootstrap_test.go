package infrastructure

import (
	"strings"
	"testing"

	"sigs.k8s.io/cluster-api/util/secret"

	"github.com/slipway-dev/slipway/internal/pki"
)

const initData = `## template: jinja
#cloud-config

write_files:
-   path: /etc/kubernetes/pki/ca.crt
    content: |
      CA
-   path: /run/kubeadm/kubeadm.yaml
    content: |
      ---
      apiVersion: kubeadm.k8s.io/v1beta4
      kind: ClusterConfiguration
      kubernetesVersion: v1.34.3
      clusterName: wc1
      controlPlaneEndpoint: 127.200.0.1:6443
      ---
      apiVersion: kubeadm.k8s.io/v1beta4
      kind: InitConfiguration
      nodeRegistration:
        taints: []
runcmd:
  - 'kubeadm init --config /run/kubeadm/kubeadm.yaml  && echo success > /run/cluster-api/bootstrap-success.complete'
`

const joinData = `#cloud-config
write_files:
-   path: /run/kubeadm/kubeadm-join-config.yaml
    encoding: base64
    content: YXBpVmVyc2lvbjoga3ViZWFkbS5rOHMuaW8vdjFiZXRhNAoKa2luZDogSm9pbkNvbmZpZ3VyYXRpb24KY29udHJvbFBsYW5lOgogIGxvY2FsQVBJRW5kcG9pbnQ6IHt9Cg==
runcmd:
  - kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml
`

func TestParseBootstrap(t *testing.T) {
	b, err := ParseBootstrap([]byte(initData), "cloud-config")
	if err != nil {
		t.Fatal(err)
	}
	if !b.Init || !b.ControlPlane || b.KubernetesVersion != "v1.34.3" ||
		b.ClusterName != "wc1" || b.Endpoint != "127.200.0.1:6443" {
		t.Errorf("init: %+v", b)
	}
	if string(b.Files["/etc/kubernetes/pki/ca.crt"]) != "CA\n" {
		t.Errorf("ca.crt: %q", b.Files["/etc/kubernetes/pki/ca.crt"])
	}
	b, err = ParseBootstrap([]byte(joinData), "")
	if err != nil {
		t.Fatal(err)
	}
	if b.Init || !b.ControlPlane {
		t.Errorf("control-plane join: %+v", b)
	}
	for _, tc := range []struct{ data, format, want string }{
		{initData, "ignition", `bootstrap data format "ignition" is not supported`},
		{"#cloud-config\nruncmd: [echo]\n", "", "neither kubeadm init nor kubeadm join"},
		{"#cloud-config\nruncmd: [kubeadm init]\n", "", "has no /run/kubeadm/kubeadm.yaml"},
	} {
		if _, err := ParseBootstrap([]byte(tc.data), tc.format); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
}

// TestBootstrapCAs: a worker's data has only ca.crt; the keys come from Cluster API's Secrets,
// and a ca.crt that is not the cluster's is refused.
func TestBootstrapCAs(t *testing.T) {
	cas, err := pki.GenerateCAs()
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[secret.Purpose]map[string][]byte{}
	for suffix, kp := range map[secret.Purpose]*pki.KeyPair{secret.ClusterCA: cas.Cluster, secret.EtcdCA: cas.Etcd, secret.FrontProxyCA: cas.FrontProxy} {
		key, _ := kp.KeyPEM()
		secrets[suffix] = map[string][]byte{"tls.crt": kp.CertPEM(), "tls.key": key}
	}
	saKey, _ := (&pki.KeyPair{Key: cas.ServiceAccount}).KeyPEM()
	secrets[secret.ServiceAccount] = map[string][]byte{"tls.key": saKey}

	worker := &Bootstrap{Files: map[string][]byte{pkiDir + "ca.crt": cas.Cluster.CertPEM()}}
	got, err := worker.CAs(secrets)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Cluster.Cert.Equal(cas.Cluster.Cert) || got.Cluster.Key == nil {
		t.Error("the worker's cluster CA is not the cluster's")
	}
	other, _ := pki.NewCA("kubernetes")
	worker.Files[pkiDir+"ca.crt"] = other.CertPEM()
	if _, err := worker.CAs(secrets); err == nil || !strings.Contains(err.Error(), "differs from the cluster's <cluster>-ca secret") {
		t.Errorf("a foreign ca.crt: %v", err)
	}
}
