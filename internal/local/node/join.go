package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/local/cluster"
)

// joinEtcd adds the node to the etcd cluster of the running control plane, as kubeadm join
// --control-plane does, and returns etcd's --initial-cluster for it. It joins as a learner, as
// kubeadm's EtcdLearnerMode (on by default since v1.29, GA in v1.32) does: the cluster keeps its quorum while
// the new member catches up, where a voting member added to a one-member cluster would stop
// every write until its etcd runs; promoteEtcd makes it a voter then. A node that joined before
// (its data directory holds a member) rejoins with what it has and returns "".
func (a *Agent) joinEtcd(ctx context.Context) (string, error) {
	if _, err := os.Stat(filepath.Join(a.dirs.Node(a.node.Name), "etcd", "member")); err == nil {
		return "", nil
	}
	// The spec the agent started with may predate this node's fellow control-plane nodes.
	spec, err := cluster.ReadSpec(a.dirs)
	if err != nil {
		return "", err
	}
	a.spec = spec
	endpoints := a.otherEtcdEndpoints()
	if len(endpoints) == 0 {
		return "", errors.New("the node joins the control plane but the cluster has no other control-plane node")
	}
	cli, err := a.etcdClient(endpoints)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	peerURL := a.etcdPeerURL()
	log := ctrl.LoggerFrom(ctx)
	var initial string
	var lastErr error
	err = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		initial, lastErr = addEtcdMember(ctx, cli, a.node.Name, peerURL)
		if lastErr != nil {
			log.Info("Waiting to join etcd", "endpoints", endpoints, "reason", lastErr.Error())
		}
		return lastErr == nil, nil
	})
	if err != nil {
		return "", fmt.Errorf("failed to join the etcd cluster at %s: %w", strings.Join(endpoints, ", "), errors.Join(err, lastErr))
	}
	log.Info("Joined etcd", "initialCluster", initial)
	return initial, nil
}

// addEtcdMember adds peerURL as a member unless it is one already, and returns the
// --initial-cluster of every member, the new one named name.
func addEtcdMember(ctx context.Context, cli *clientv3.Client, name, peerURL string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := cli.MemberList(ctx)
	if err != nil {
		return "", err
	}
	members := list.Members
	known := false
	for _, m := range members {
		for _, u := range m.PeerURLs {
			known = known || u == peerURL
		}
	}
	if !known {
		added, err := cli.MemberAddAsLearner(ctx, []string{peerURL})
		if err != nil {
			return "", err
		}
		members = added.Members
	}
	var parts []string
	for _, m := range members {
		memberName := m.Name
		for _, u := range m.PeerURLs {
			if u == peerURL || memberName == "" {
				memberName = name
			}
			parts = append(parts, memberName+"="+u)
		}
	}
	return strings.Join(parts, ","), nil
}

// promoteEtcd makes the node's etcd member a voting member once it has caught up with the
// leader, as kubeadm join does after it starts a learner; a voter already, or a member removed,
// is left alone. It asks the other members (a learner refuses the request) every second until
// the context ends, and is run at each start of a joining node's agent, so a learner left by an
// agent stopped mid-way is promoted too.
func (a *Agent) promoteEtcd(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx)
	peerURL := a.etcdPeerURL()
	endpoints := a.otherEtcdEndpoints()
	if len(endpoints) == 0 {
		return
	}
	cli, err := a.etcdClient(endpoints)
	if err != nil {
		log.Error(err, "Cannot promote the etcd learner")
		return
	}
	defer cli.Close()
	var last error
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		var promoted bool
		promoted, last = promoteMember(ctx, cli, peerURL)
		return promoted, nil
	})
	if err != nil {
		log.Info("Stopped promoting the etcd learner", "reason", errors.Join(err, last).Error())
	}
}

// promoteMember promotes the learner of peerURL, and says whether there is nothing left to do:
// the member is a voter now, or is no longer a member.
func promoteMember(ctx context.Context, cli *clientv3.Client, peerURL string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := cli.MemberList(ctx)
	if err != nil {
		return false, err
	}
	for _, m := range list.Members {
		if !slices.Contains(m.PeerURLs, peerURL) {
			continue
		}
		if !m.IsLearner {
			return true, nil
		}
		if _, err := cli.MemberPromote(ctx, m.ID); err != nil {
			return false, err
		}
		ctrl.LoggerFrom(ctx).Info("Promoted the etcd learner to a voting member")
		return true, nil
	}
	ctrl.LoggerFrom(ctx).Info("The node is not an etcd member: nothing to promote", "peerURL", peerURL)
	return true, nil
}

// waitEtcdNamed waits, for at most two minutes, until this node's etcd member has published
// its name, before the node registers. Cluster API's KubeadmControlPlane removes an etcd member
// that no Machine's Node is named after once every Machine has its Node; a learner that has not
// published its name yet (seconds on a loaded host) would be removed for good, and its node could
// never join.
func (a *Agent) waitEtcdNamed(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx)
	endpoints := a.otherEtcdEndpoints()
	if len(endpoints) == 0 {
		return
	}
	cli, err := a.etcdClient(endpoints)
	if err != nil {
		log.Error(err, "Cannot read the etcd members before registering")
		return
	}
	defer cli.Close()
	peerURL := a.etcdPeerURL()
	var why string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		listCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		list, err := cli.MemberList(listCtx)
		if err != nil {
			why = err.Error()
			return false, nil
		}
		for _, m := range list.Members {
			if slices.Contains(m.PeerURLs, peerURL) {
				why = "the member has not published its name yet"
				return m.Name != "", nil
			}
		}
		why = "the node is not an etcd member"
		return true, nil
	})
	if err != nil {
		log.Info("Registering before the etcd member is named", "reason", why)
	}
}

// etcdPeerURL is this node's etcd peer URL.
func (a *Agent) etcdPeerURL() string {
	return "https://" + net.JoinHostPort(a.node.IP, fmt.Sprint(cluster.EtcdPeerPort))
}

// otherEtcdEndpoints are the etcd client URLs of the cluster's control-plane nodes but this one.
func (a *Agent) otherEtcdEndpoints() []string {
	var endpoints []string
	for _, n := range a.spec.ControlPlane() {
		if n.Name != a.node.Name {
			endpoints = append(endpoints, "https://"+net.JoinHostPort(n.IP, fmt.Sprint(cluster.EtcdPort)))
		}
	}
	return endpoints
}

// etcdClient is a client of the etcd members at endpoints with the API server's etcd client
// identity on this node. It logs nothing: its callers try again and report what stopped them
// (until a learner has caught up, etcd refuses its promotion, and that is expected).
func (a *Agent) etcdClient(endpoints []string) (*clientv3.Client, error) {
	pkiDir := a.dirs.NodePKI(a.node.Name)
	cert, err := tls.LoadX509KeyPair(filepath.Join(pkiDir, "apiserver-etcd-client.crt"), filepath.Join(pkiDir, "apiserver-etcd-client.key"))
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(filepath.Join(pkiDir, "etcd", "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}
	return clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, TLS: tlsConfig, Logger: zap.NewNop()})
}

// initCluster runs kubeadm init's upload and addon phases against the node's API server.
func (a *Agent) initCluster(ctx context.Context) error {
	caPEM, err := os.ReadFile(filepath.Join(a.dirs.NodePKI(a.node.Name), "ca.crt"))
	if err != nil {
		return err
	}
	spec := *a.spec
	spec.KubernetesVersion = a.spec.NodeVersion(a.node)
	return wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := cluster.ApplyInitManifests(ctx, a.client, &spec, caPEM); err != nil {
			ctrl.LoggerFrom(ctx).Info("Retrying kubeadm init's phases", "reason", err.Error())
			return false, nil
		}
		return true, nil
	})
}
