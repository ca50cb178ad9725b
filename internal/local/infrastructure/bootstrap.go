package infrastructure

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/pki"
)

// Where kubeadm and Cluster API's kubeadm bootstrap provider put things on a machine.
const (
	pkiDir = "/etc/kubernetes/pki/"
	// The configuration files kubeadm init and join read.
	initConfigFile = "/run/kubeadm/kubeadm.yaml"
	joinConfigFile = "/run/kubeadm/kubeadm-join-config.yaml"
)

// Bootstrap is what a machine's cloud-init bootstrap data asks of its node.
type Bootstrap struct {
	// Init is kubeadm init: the first control-plane node. Otherwise the node joins.
	Init bool
	// ControlPlane is true for init and for kubeadm join --control-plane.
	ControlPlane bool
	// KubernetesVersion is ClusterConfiguration.kubernetesVersion, for init.
	KubernetesVersion string
	// ClusterName is ClusterConfiguration.clusterName, for init.
	ClusterName string
	// Endpoint is the control-plane endpoint, host:port: ClusterConfiguration's for init,
	// discovery.bootstrapToken.apiServerEndpoint for join.
	Endpoint string
	// ImageRepository is ClusterConfiguration.imageRepository, for init: where kubeadm pulls
	// the Kubernetes images from (TKR_DATA's, a custom image repository when the Cluster names
	// one).
	ImageRepository string
	// Files are the files the data writes, by path.
	Files map[string][]byte
	// UserData is the data as it is: a real node executes it as cloud-init does.
	UserData []byte
}

// cloudConfig is the part of cloud-init's #cloud-config the kubeadm bootstrap provider writes.
type cloudConfig struct {
	WriteFiles []struct {
		Path     string `json:"path"`
		Encoding string `json:"encoding"`
		Content  string `json:"content"`
	} `json:"write_files"`
	RunCmd []any `json:"runcmd"`
}

// ParseBootstrap reads the cloud-config the kubeadm bootstrap provider renders (format
// cloud-config): the files it writes, and whether its command is kubeadm init or join.
func ParseBootstrap(data []byte, format string) (*Bootstrap, error) {
	if format != "" && format != "cloud-config" {
		return nil, fmt.Errorf("bootstrap data format %q is not supported by the local provider: use cloud-config (KubeadmConfig spec.format)", format)
	}
	var cc cloudConfig
	if err := yaml.Unmarshal(data, &cc); err != nil {
		return nil, fmt.Errorf("bootstrap data is not a cloud-config: %w", err)
	}
	b := &Bootstrap{Files: map[string][]byte{}, UserData: data}
	for _, f := range cc.WriteFiles {
		content := []byte(f.Content)
		switch f.Encoding {
		case "", "text/plain":
		case "b64", "base64":
			decoded, err := base64.StdEncoding.DecodeString(f.Content)
			if err != nil {
				return nil, fmt.Errorf("bootstrap file %s: %w", f.Path, err)
			}
			content = decoded
		default:
			return nil, fmt.Errorf("bootstrap file %s has encoding %q, which the local provider does not read", f.Path, f.Encoding)
		}
		b.Files[f.Path] = content
	}
	var command string
	for _, c := range cc.RunCmd {
		line := fmt.Sprint(c)
		if strings.Contains(line, "kubeadm init") || strings.Contains(line, "kubeadm join") {
			command = line
			break
		}
	}
	switch {
	case strings.Contains(command, "kubeadm init"):
		b.Init, b.ControlPlane = true, true
		return b, b.readConfig(initConfigFile)
	case strings.Contains(command, "kubeadm join"):
		return b, b.readConfig(joinConfigFile)
	default:
		return nil, errors.New("bootstrap data runs neither kubeadm init nor kubeadm join")
	}
}

// readConfig reads the kubeadm configuration documents of a bootstrap file.
func (b *Bootstrap) readConfig(path string) error {
	raw, ok := b.Files[path]
	if !ok {
		return fmt.Errorf("bootstrap data has no %s", path)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var doc struct {
			Kind                 string `json:"kind"`
			KubernetesVersion    string `json:"kubernetesVersion"`
			ClusterName          string `json:"clusterName"`
			ImageRepository      string `json:"imageRepository"`
			ControlPlaneEndpoint string `json:"controlPlaneEndpoint"`
			Discovery            struct {
				BootstrapToken *struct {
					APIServerEndpoint string `json:"apiServerEndpoint"`
				} `json:"bootstrapToken"`
			} `json:"discovery"`
			ControlPlane *struct{} `json:"controlPlane"`
		}
		if err := decoder.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		switch doc.Kind {
		case "ClusterConfiguration":
			b.KubernetesVersion, b.ClusterName, b.Endpoint = doc.KubernetesVersion, doc.ClusterName, doc.ControlPlaneEndpoint
			b.ImageRepository = doc.ImageRepository
		case "JoinConfiguration":
			b.ControlPlane = doc.ControlPlane != nil
			if doc.Discovery.BootstrapToken != nil {
				b.Endpoint = doc.Discovery.BootstrapToken.APIServerEndpoint
			}
		}
	}
}

// caFiles maps Cluster API's certificate secrets to the files kubeadm reads them from.
var caFiles = map[secret.Purpose]string{
	secret.ClusterCA:      "ca",
	secret.EtcdCA:         "etcd/ca",
	secret.FrontProxyCA:   "front-proxy-ca",
	secret.ServiceAccount: "sa",
}

// CAs returns the cluster's authorities for the node: those the bootstrap data carries (a
// control-plane node gets every CA and key), completed from Cluster API's certificate secrets
// (a worker gets only ca.crt, whose key signs its kubelet credentials). A CA in the data that
// differs from the cluster's secret is refused.
func (b *Bootstrap) CAs(secrets map[secret.Purpose]map[string][]byte) (*pki.CAs, error) {
	data := map[secret.Purpose]map[string][]byte{}
	for suffix, base := range caFiles {
		fromSecret := secrets[suffix]
		crtName, keyName := base+".crt", base+".key"
		if suffix == secret.ServiceAccount {
			crtName, keyName = "sa.pub", "sa.key"
		}
		crt, hasCrt := b.Files[pkiDir+crtName]
		key, hasKey := b.Files[pkiDir+keyName]
		if hasCrt && suffix != secret.ServiceAccount && fromSecret != nil && !bytes.Equal(bytes.TrimSpace(crt), bytes.TrimSpace(fromSecret[secret.TLSCrtDataName])) {
			return nil, fmt.Errorf("bootstrap data's %s%s differs from the cluster's <cluster>-%s secret", pkiDir, crtName, suffix)
		}
		entry := map[string][]byte{}
		for k, v := range fromSecret {
			entry[k] = v
		}
		if hasCrt && suffix != secret.ServiceAccount {
			entry[secret.TLSCrtDataName] = crt
		}
		if hasKey {
			entry[secret.TLSKeyDataName] = key
		}
		if len(entry) > 0 {
			data[suffix] = entry
		}
	}
	return pki.CAsFromSecretData(data)
}
