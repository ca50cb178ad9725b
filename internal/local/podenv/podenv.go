// Package podenv is the contract between the node agent and the component processes it starts:
// the environment a component's pod is described by, and how a component reads it (paths of its
// mounts, the address to bind, its in-cluster configuration). It is a leaf, so that the node
// agent does not compile the components.
package podenv

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The environment the node agent gives a component process, besides the pod's own.
const (
	// EnvPodDir is the pod's directory on the host.
	EnvPodDir = "SLIPWAY_POD_DIR"
	// EnvPodIP is the pod's loopback address; servers bind to it.
	EnvPodIP = "SLIPWAY_POD_IP"
	// EnvMounts maps the container's mount paths to host paths, as JSON.
	EnvMounts = "SLIPWAY_MOUNTS"
	// EnvLocalStore is the directory of the local runtime's clusters on this host, where the
	// local infrastructure provider keeps the clusters it makes.
	EnvLocalStore = "SLIPWAY_LOCAL_STORE"
	// EnvLocalCluster names the local cluster the pod runs in.
	EnvLocalCluster = "SLIPWAY_LOCAL_CLUSTER"
)

// EnvNodeName is the pod's spec.nodeName, which a Deployment gives its container through the
// downward API: the local infrastructure provider's, by which it finds the cluster it runs in on
// a real node.
const EnvNodeName = "NODE_NAME"

// serviceAccountDir is where Kubernetes mounts a pod's token, CA and namespace.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Pod is what a component knows of the pod it runs in. In a container on a real cluster it is
// empty and every path and address is used as given.
type Pod struct {
	// Dir is the pod's directory on the host.
	Dir string
	// IP is the pod's address.
	IP string
	// Mounts maps mount paths to host paths.
	Mounts map[string]string
}

// Current reads the pod the process runs in from its environment.
func Current() (Pod, error) {
	p := Pod{Dir: os.Getenv(EnvPodDir), IP: os.Getenv(EnvPodIP), Mounts: map[string]string{}}
	if raw := os.Getenv(EnvMounts); raw != "" {
		if err := json.Unmarshal([]byte(raw), &p.Mounts); err != nil {
			return Pod{}, fmt.Errorf("failed to read %s: %w", EnvMounts, err)
		}
	}
	return p, nil
}

// Path returns where a path inside the container is on the host: the mount with the longest
// matching prefix decides.
func (p Pod) Path(containerPath string) string {
	var prefixes []string
	for m := range p.Mounts {
		prefixes = append(prefixes, m)
	}
	sort.Slice(prefixes, func(i, j int) bool { return len(prefixes[i]) > len(prefixes[j]) })
	clean := filepath.Clean(containerPath)
	for _, m := range prefixes {
		if clean == m || strings.HasPrefix(clean, strings.TrimSuffix(m, "/")+"/") {
			return filepath.Join(p.Mounts[m], strings.TrimPrefix(clean, m))
		}
	}
	if p.Dir != "" && filepath.IsAbs(clean) {
		// Unmounted paths live in the pod's own root, as a container's writable layer.
		return filepath.Join(p.Dir, "root", clean)
	}
	return containerPath
}

// BindAddress turns a listen address such as ":9443" into one on the pod's address, since
// every pod on the local runtime shares the host's network.
func (p Pod) BindAddress(addr string) string {
	if p.IP == "" || addr == "0" {
		return addr
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return net.JoinHostPort(p.IP, port)
}

// RestConfig returns the in-cluster configuration: the service-account token and CA from the
// pod's mount and the API endpoint from KUBERNETES_SERVICE_HOST and _PORT.
func (p Pod) RestConfig() (*rest.Config, error) {
	if p.Dir == "" {
		return ctrl.GetConfig()
	}
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, fmt.Errorf("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set")
	}
	tokenFile := p.Path(filepath.Join(serviceAccountDir, "token"))
	if _, err := os.Stat(tokenFile); err != nil {
		return nil, fmt.Errorf("no service-account token: %w", err)
	}
	// As controller-runtime's GetConfig gives a container: no client-side rate limit, the API
	// server's priority and fairness does that job. (client-go's default, 5 requests a second,
	// made a package repository of 55 objects take 13 s to deploy.)
	return &rest.Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		BearerTokenFile: tokenFile,
		TLSClientConfig: rest.TLSClientConfig{CAFile: p.Path(filepath.Join(serviceAccountDir, "ca.crt"))},
		QPS:             -1,
	}, nil
}

// CurrentConfig reads the pod the process runs in and its in-cluster configuration, what
// every component starts with. In a pod of the local runtime it also makes that configuration
// the one controller-runtime's GetConfig finds, as in a container: libraries that look the
// in-cluster configuration up themselves (Cluster API's cluster cache, when the management
// cluster manages itself) get it.
func CurrentConfig() (Pod, *rest.Config, error) {
	pod, err := Current()
	if err != nil {
		return Pod{}, nil, err
	}
	cfg, err := pod.RestConfig()
	if err != nil || pod.Dir == "" {
		return pod, cfg, err
	}
	path, err := pod.writeKubeconfig(cfg)
	if err != nil {
		return Pod{}, nil, err
	}
	return pod, cfg, os.Setenv(clientcmd.RecommendedConfigPathEnvVar, path)
}

// writeKubeconfig writes the in-cluster configuration as a kubeconfig in the pod's directory:
// the API endpoint, the CA file and the token file, which the node agent keeps current.
func (p Pod) writeKubeconfig(cfg *rest.Config) (string, error) {
	path := filepath.Join(p.Dir, "in-cluster.kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["in-cluster"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["in-cluster"] = &clientcmdapi.AuthInfo{TokenFile: cfg.BearerTokenFile}
	kc.Contexts["in-cluster"] = &clientcmdapi.Context{Cluster: "in-cluster", AuthInfo: "in-cluster"}
	kc.CurrentContext = "in-cluster"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return "", fmt.Errorf("failed to write the pod's in-cluster kubeconfig: %w", err)
	}
	return path, nil
}

// Namespace returns the pod's namespace: $POD_NAMESPACE when the manifest sets it, else the
// service account's namespace file, as in a container.
func (p Pod) Namespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	data, err := os.ReadFile(p.Path(filepath.Join(serviceAccountDir, "namespace")))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
