package node

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/local/cluster"
)

// staticComponent is one control-plane component and how the node agent runs and probes it.
type staticComponent struct {
	name  string
	image string
	// args are the component's flags, as kubeadm's static pod manifest has them.
	args []string
	// health is the HTTPS URL whose 200 answer means the component is ready.
	health string
	port   int
	// grace is how long the component has to stop after SIGTERM; zero is 30 s, the kubelet's.
	grace time.Duration
}

// staticComponents returns the components of a control-plane node, in start order. etcdJoin is
// etcd's --initial-cluster when the node joins a running etcd cluster; empty starts a new one.
func staticComponents(spec *cluster.Spec, node cluster.NodeSpec, dirs cluster.Dirs, set assets.Set, etcdJoin string) ([]staticComponent, []string, error) {
	pki := dirs.NodePKI(node.Name)
	p := func(name string) string { return filepath.Join(pki, name) }
	kubeconfig := func(name string) string { return filepath.Join(dirs.Node(node.Name), name) }
	hostPort := func(port int) string { return net.JoinHostPort(node.IP, fmt.Sprint(port)) }
	version := spec.NodeVersion(node)
	initialCluster, clusterState := spec.EtcdInitialCluster(), "new"
	if etcdJoin != "" {
		initialCluster, clusterState = etcdJoin, "existing"
	}

	etcdArgs := []string{
		"--name=" + node.Name,
		"--data-dir=" + filepath.Join(dirs.Node(node.Name), "etcd"),
		"--listen-client-urls=https://" + hostPort(cluster.EtcdPort),
		"--advertise-client-urls=https://" + hostPort(cluster.EtcdPort),
		"--listen-peer-urls=https://" + hostPort(cluster.EtcdPeerPort),
		"--initial-advertise-peer-urls=https://" + hostPort(cluster.EtcdPeerPort),
		"--initial-cluster=" + initialCluster,
		"--initial-cluster-state=" + clusterState,
		"--initial-cluster-token=" + spec.Name,
		"--listen-metrics-urls=http://" + net.JoinHostPort(node.IP, "2381"),
		"--cert-file=" + p("etcd/server.crt"), "--key-file=" + p("etcd/server.key"),
		"--trusted-ca-file=" + p("etcd/ca.crt"), "--client-cert-auth=true",
		"--peer-cert-file=" + p("etcd/peer.crt"), "--peer-key-file=" + p("etcd/peer.key"),
		"--peer-trusted-ca-file=" + p("etcd/ca.crt"), "--peer-client-cert-auth=true",
		"--snapshot-count=10000",
		"--experimental-initial-corrupt-check=true",
	}
	apiserverArgs := []string{
		// The API server listens on loopback and shows the node's network address; its cluster
		// traffic (webhooks, kubelets) goes through the node agent's egress proxy.
		"--advertise-address=" + node.Address,
		"--egress-selector-config-file=" + filepath.Join(dirs.Node(node.Name), egressConfigFile),
		"--bind-address=" + node.IP,
		fmt.Sprintf("--secure-port=%d", cluster.APIServerPort),
		"--allow-privileged=true",
		"--authorization-mode=Node,RBAC",
		"--client-ca-file=" + p("ca.crt"),
		"--enable-admission-plugins=NodeRestriction",
		"--enable-bootstrap-token-auth=true",
		"--enable-aggregator-routing=true",
		"--etcd-servers=https://" + hostPort(cluster.EtcdPort),
		"--etcd-cafile=" + p("etcd/ca.crt"),
		"--etcd-certfile=" + p("apiserver-etcd-client.crt"),
		"--etcd-keyfile=" + p("apiserver-etcd-client.key"),
		"--kubelet-client-certificate=" + p("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + p("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP",
		"--proxy-client-cert-file=" + p("front-proxy-client.crt"),
		"--proxy-client-key-file=" + p("front-proxy-client.key"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-client-ca-file=" + p("front-proxy-ca.crt"),
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--service-account-issuer=https://kubernetes.default.svc." + cluster.DNSDomain,
		"--service-account-key-file=" + p("sa.pub"),
		"--service-account-signing-key-file=" + p("sa.key"),
		"--service-cluster-ip-range=" + cluster.ServiceCIDR,
		"--tls-cert-file=" + p("apiserver.crt"),
		"--tls-private-key-file=" + p("apiserver.key"),
	}
	kcmArgs := []string{
		"--authentication-kubeconfig=" + kubeconfig("controller-manager.conf"),
		"--authorization-kubeconfig=" + kubeconfig("controller-manager.conf"),
		"--kubeconfig=" + kubeconfig("controller-manager.conf"),
		"--bind-address=" + node.IP,
		fmt.Sprintf("--secure-port=%d", cluster.KCMPort),
		"--client-ca-file=" + p("ca.crt"),
		"--cluster-name=" + spec.Name,
		"--cluster-signing-cert-file=" + p("ca.crt"),
		"--cluster-signing-key-file=" + p("ca.key"),
		"--controllers=*,bootstrapsigner,tokencleaner",
		"--leader-elect=true",
		"--requestheader-client-ca-file=" + p("front-proxy-ca.crt"),
		"--root-ca-file=" + p("ca.crt"),
		"--service-account-private-key-file=" + p("sa.key"),
		"--use-service-account-credentials=true",
		"--allocate-node-cidrs=false",
	}
	schedulerArgs := []string{
		"--authentication-kubeconfig=" + kubeconfig("scheduler.conf"),
		"--authorization-kubeconfig=" + kubeconfig("scheduler.conf"),
		"--kubeconfig=" + kubeconfig("scheduler.conf"),
		"--bind-address=" + node.IP,
		fmt.Sprintf("--secure-port=%d", cluster.SchedulerPort),
		"--leader-elect=true",
	}

	components := []staticComponent{
		{name: "etcd", image: "registry.k8s.io/etcd:" + strings.TrimPrefix(assets.EtcdVersion, "v") + "-0", args: etcdArgs,
			health: "https://" + hostPort(cluster.EtcdPort) + "/health", port: cluster.EtcdPort},
		// The API server stops listening at once but then waits, past any grace period, for
		// streams it proxies to the node (the port-forwards to etcd of Cluster API's control-plane
		// controller); a node that stops has nobody left to serve them.
		{name: "kube-apiserver", image: "registry.k8s.io/kube-apiserver:" + version, args: apiserverArgs,
			health: "https://" + hostPort(cluster.APIServerPort) + "/readyz", port: cluster.APIServerPort, grace: 3 * time.Second},
		{name: "kube-controller-manager", image: "registry.k8s.io/kube-controller-manager:" + version, args: kcmArgs,
			health: "https://" + hostPort(cluster.KCMPort) + "/healthz", port: cluster.KCMPort},
		{name: "kube-scheduler", image: "registry.k8s.io/kube-scheduler:" + version, args: schedulerArgs,
			health: "https://" + hostPort(cluster.SchedulerPort) + "/healthz", port: cluster.SchedulerPort},
	}
	var binaries []string
	for _, c := range components {
		var path string
		var err error
		if c.name == "etcd" {
			path, err = set.EtcdPath()
		} else {
			path, err = set.Kubernetes(version, c.name)
		}
		if err != nil {
			return nil, nil, err
		}
		binaries = append(binaries, path)
	}
	return components, binaries, nil
}
