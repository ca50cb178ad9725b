package pki

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/keyutil"
	"sigs.k8s.io/cluster-api/util/secret"
)

// CAs are the authorities of one cluster, as kubeadm has them.
type CAs struct {
	// Cluster signs the API server, kubelet and client certificates (pki/ca).
	Cluster *KeyPair
	// Etcd signs etcd's server, peer and client certificates (pki/etcd/ca).
	Etcd *KeyPair
	// FrontProxy signs the aggregation layer's client certificate (pki/front-proxy-ca).
	FrontProxy *KeyPair
	// ServiceAccount signs service account tokens (pki/sa).
	ServiceAccount crypto.Signer
}

// GenerateCAs returns new authorities for a cluster.
func GenerateCAs() (*CAs, error) {
	cluster, err := NewCA("kubernetes")
	if err != nil {
		return nil, err
	}
	etcd, err := NewCA("etcd-ca")
	if err != nil {
		return nil, err
	}
	proxy, err := NewCA("front-proxy-ca")
	if err != nil {
		return nil, err
	}
	sa, err := NewKey()
	if err != nil {
		return nil, err
	}
	return &CAs{Cluster: cluster, Etcd: etcd, FrontProxy: proxy, ServiceAccount: sa}, nil
}

// Write stores the authorities in a pki directory in kubeadm's layout.
func (c *CAs) Write(dir string) error {
	for base, kp := range map[string]*KeyPair{"ca": c.Cluster, "etcd/ca": c.Etcd, "front-proxy-ca": c.FrontProxy} {
		if err := kp.Write(filepath.Join(dir, base)); err != nil {
			return err
		}
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(c.ServiceAccount)
	if err != nil {
		return err
	}
	pubPEM, err := publicKeyPEM(c.ServiceAccount.Public())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), keyPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sa.pub"), pubPEM, 0o644)
}

// ReadCAs loads the authorities from a pki directory.
func ReadCAs(dir string) (*CAs, error) {
	var c CAs
	var err error
	if c.Cluster, err = Read(filepath.Join(dir, "ca")); err != nil {
		return nil, err
	}
	if c.Etcd, err = Read(filepath.Join(dir, "etcd/ca")); err != nil {
		return nil, err
	}
	if c.FrontProxy, err = Read(filepath.Join(dir, "front-proxy-ca")); err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, "sa.key"))
	if err != nil {
		return nil, err
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("failed to parse sa.key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("sa.key cannot sign")
	}
	c.ServiceAccount = signer
	return &c, nil
}

func publicKeyPEM(pub crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// Kubeconfig returns a kubeconfig for a client certificate signed by the cluster CA.
func Kubeconfig(cas *CAs, clusterName, server, user string, groups []string) (*clientcmdapi.Config, error) {
	kp, err := cas.Cluster.Issue(CertSpec{CommonName: user, Organization: groups, Usages: ClientUsage})
	if err != nil {
		return nil, err
	}
	keyPEM, err := kp.KeyPEM()
	if err != nil {
		return nil, err
	}
	contextName := fmt.Sprintf("%s@%s", user, clusterName)
	return &clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{clusterName: {
			Server:                   server,
			CertificateAuthorityData: cas.Cluster.CertPEM(),
		}},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{user: {
			ClientCertificateData: kp.CertPEM(),
			ClientKeyData:         keyPEM,
		}},
		Contexts:       map[string]*clientcmdapi.Context{contextName: {Cluster: clusterName, AuthInfo: user}},
		CurrentContext: contextName,
	}, nil
}

// WriteKubeconfig issues a client certificate and writes its kubeconfig to path.
func WriteKubeconfig(path string, cas *CAs, clusterName, server, user string, groups []string) error {
	cfg, err := Kubeconfig(cas, clusterName, server, user, groups)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*cfg, path)
}

// CAsFromSecretData builds a cluster's authorities from the data of Cluster API's secrets
// (<cluster>-ca, -etcd, -proxy and -sa, each with tls.crt and tls.key), keyed by purpose, so that
// the kubeconfig Cluster API generates works against the nodes unchanged.
func CAsFromSecretData(secrets map[secret.Purpose]map[string][]byte) (*CAs, error) {
	pair := func(suffix secret.Purpose) (*KeyPair, error) {
		data, ok := secrets[suffix]
		if !ok {
			return nil, fmt.Errorf("secret <cluster>-%s is missing", suffix)
		}
		kp, err := ParseKeyPair(data[secret.TLSCrtDataName], data[secret.TLSKeyDataName])
		if err != nil {
			return nil, fmt.Errorf("secret <cluster>-%s: %w", suffix, err)
		}
		return kp, nil
	}
	var c CAs
	var err error
	if c.Cluster, err = pair(secret.ClusterCA); err != nil {
		return nil, err
	}
	if c.Etcd, err = pair(secret.EtcdCA); err != nil {
		return nil, err
	}
	if c.FrontProxy, err = pair(secret.FrontProxyCA); err != nil {
		return nil, err
	}
	sa, ok := secrets[secret.ServiceAccount]
	if !ok {
		return nil, fmt.Errorf("secret <cluster>-%s is missing", secret.ServiceAccount)
	}
	key, err := keyutil.ParsePrivateKeyPEM(sa[secret.TLSKeyDataName])
	if err != nil {
		return nil, fmt.Errorf("secret <cluster>-%s: %w", secret.ServiceAccount, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("secret <cluster>-%s: the key cannot sign", secret.ServiceAccount)
	}
	c.ServiceAccount = signer
	return &c, nil
}
