package cluster

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/pki"
)

// Networks of a cluster of real nodes: TKG's defaults (CLUSTER_CIDR, SERVICE_CIDR), which
// collide with nothing on the bridge.
const (
	RealPodSubnet     = "100.96.0.0/11"
	RealServiceSubnet = "100.64.0.0/13"
)

// criSocket is where a node's containerd serves the kubelet and kubeadm.
const criSocket = "unix:///run/containerd/containerd.sock"

// bootstrap is what the nodes of one cluster share to join it: kubeadm's bootstrap token and
// the hash of the cluster CA's public key that the joining nodes pin.
type bootstrap struct {
	token  string
	caHash string
}

// newBootstrap makes a bootstrap token ([a-z0-9]{6}.[a-z0-9]{16}, as kubeadm's) and the CA pin.
// kubeadm's configurations quote the token: one of digits alone would read as a YAML number.
func newBootstrap(cas *pki.CAs) (bootstrap, error) {
	id, err := randomToken(6)
	if err != nil {
		return bootstrap{}, err
	}
	secret, err := randomToken(16)
	if err != nil {
		return bootstrap{}, err
	}
	sum := sha256.Sum256(cas.Cluster.Cert.RawSubjectPublicKeyInfo)
	return bootstrap{token: id + "." + secret, caHash: "sha256:" + hex.EncodeToString(sum[:])}, nil
}

func randomToken(n int) (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", err
		}
		b[i] = alphabet[k.Int64()]
	}
	return string(b), nil
}

// nodeRegistration is kubeadm's nodeRegistration of every node of a cluster of real nodes. The
// node skips the preflight checks it cannot pass itself (package vm).
func nodeRegistration(taints bool) string {
	s := `nodeRegistration:
  name: '{{ ds.meta_data.local_hostname }}'
  criSocket: ` + criSocket + `
`
	if !taints {
		// A cluster without workers runs its pods on its control plane, as kind's does.
		s += "  taints: []\n"
	}
	return s
}

// userData is the cloud-config a node of the cluster boots from, as Cluster API's kubeadm
// bootstrap provider writes it: kubeadm's configuration in /run/kubeadm, then kubeadm init on
// the first control-plane node and kubeadm join on the others. The CAs are in the control-plane
// nodes' /etc/kubernetes/pki before they boot, so that every control-plane node shares them (as
// kubeadm's manual certificate distribution has it) and the administrator's kubeconfig, signed by
// the cluster CA, works.
func userData(spec *Spec, n NodeSpec, b bootstrap) (string, error) {
	release, err := assets.ReleaseOf(spec.NodeVersion(n))
	if err != nil {
		return "", err
	}
	taints := len(spec.Nodes) > len(spec.ControlPlane())
	var config, command string
	switch {
	case n.Name == spec.ControlPlane()[0].Name:
		config = fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
bootstrapTokens:
- token: "%[1]s"
  description: joins the nodes of slipway local cluster %[2]s
localAPIEndpoint:
  advertiseAddress: %[3]s
%[4]s---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
clusterName: %[2]s
kubernetesVersion: %[5]s
imageRepository: %[6]s
controlPlaneEndpoint: %[7]s:%[8]d
apiServer:
  certSANs: [%[7]s, localhost, 127.0.0.1]
etcd:
  local:
    imageTag: %[9]s
dns:
  imageRepository: %[6]s
  imageTag: %[10]s
networking:
  podSubnet: %[11]s
  serviceSubnet: %[12]s
  dnsDomain: %[13]s
`, b.token, spec.Name, n.IP, nodeRegistration(taints), release.KubeadmVersion(), assets.ImageRepository,
			spec.EndpointHost(), APIServerPort, release.EtcdTag, release.CoreDNSTag, RealPodSubnet, RealServiceSubnet, DNSDomain)
		command = "kubeadm init --config /run/kubeadm/kubeadm.yaml"
	default:
		controlPlane := ""
		if n.Role == RoleControlPlane {
			controlPlane = fmt.Sprintf("controlPlane:\n  localAPIEndpoint:\n    advertiseAddress: %s\n", n.IP)
		}
		config = fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: %s:%d
    token: "%s"
    caCertHashes: [%s]
%s%s`, spec.EndpointHost(), APIServerPort, b.token, b.caHash, controlPlane, nodeRegistration(taints))
		command = "kubeadm join --config /run/kubeadm/kubeadm.yaml"
	}
	return "## template: jinja\n#cloud-config\nwrite_files:\n-   path: /run/kubeadm/kubeadm.yaml\n    owner: root:root\n    permissions: '0640'\n    content: |\n" +
		indent(config, "      ") + "runcmd:\n  - '" + command + "'\n", nil
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}
