package cluster

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/slipway-dev/slipway/internal/pki"
)

// Kubeconfig files in a node's directory, as kubeadm names them in /etc/kubernetes.
const (
	NodeKubeletConf           = "kubelet.conf"
	NodeControllerManagerConf = "controller-manager.conf"
	NodeSchedulerConf         = "scheduler.conf"
)

// PrepareNode writes a node's certificates and kubeconfigs: for a control-plane node the
// kubeadm set (API server, etcd, front proxy, controller-manager.conf, scheduler.conf), for every
// node the kubelet's serving certificate and kubelet.conf.
func PrepareNode(dirs Dirs, spec *Spec, node NodeSpec, cas *pki.CAs) error {
	pkiDir := dirs.NodePKI(node.Name)
	ip := net.ParseIP(node.IP)
	if node.Role == RoleControlPlane {
		err := pki.WriteControlPlane(pkiDir, cas, pki.ControlPlaneSpec{
			Node:       pki.Node{Name: node.Name, IP: ip, Address: net.ParseIP(node.Address)},
			EndpointIP: net.ParseIP(spec.EndpointHost()),
			ServiceIP:  net.ParseIP(ServiceIP),
		})
		if err != nil {
			return fmt.Errorf("failed to issue certificates of node %s: %w", node.Name, err)
		}
		local := fmt.Sprintf("https://%s", net.JoinHostPort(node.IP, fmt.Sprint(APIServerPort)))
		for file, user := range map[string]string{
			NodeControllerManagerConf: "system:kube-controller-manager",
			NodeSchedulerConf:         "system:kube-scheduler",
		} {
			if err := pki.WriteKubeconfig(filepath.Join(dirs.Node(node.Name), file), cas, spec.Name, local, user, nil); err != nil {
				return err
			}
		}
	} else if err := cas.Write(pkiDir); err != nil {
		return err
	}
	serving, err := cas.Cluster.Issue(pki.CertSpec{
		CommonName: node.Name, DNSNames: []string{node.Name}, IPs: []net.IP{ip, net.ParseIP(node.Address)}, Usages: pki.ServerUsage,
	})
	if err != nil {
		return err
	}
	if err := serving.Write(filepath.Join(pkiDir, "kubelet")); err != nil {
		return err
	}
	// The agent acts for the node and, on the local runtime, also marks simulated pods, which
	// a node identity may not do: it is a cluster administrator named after the node.
	return pki.WriteKubeconfig(filepath.Join(dirs.Node(node.Name), NodeKubeletConf), cas, spec.Name, spec.Endpoint(),
		"system:node:"+node.Name, []string{"system:masters"})
}
