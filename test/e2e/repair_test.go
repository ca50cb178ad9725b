package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	"github.com/slipway-dev/slipway/internal/local/proc"
)

// restartBound is how soon the local provider starts again a process of its clusters that died.
const restartBound = 10 * time.Second

// killAndWaitRestart kills the process of pidPath with SIGKILL, as a crash would, and returns
// how long the local provider took to start it again; beyond restartBound the test fails.
func killAndWaitRestart(t *testing.T, pidPath string) time.Duration {
	t.Helper()
	pid := proc.ReadPID(pidPath)
	if pid <= 0 {
		t.Fatalf("no process in %s to kill", pidPath)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for {
		if p := proc.ReadPID(pidPath); p > 0 && p != pid && len(proc.Cmdline(p)) > 0 {
			return time.Since(killed)
		}
		if time.Since(killed) > restartBound {
			t.Fatalf("the process of %s (pid %d) was killed and not started again within %s", pidPath, pid, restartBound)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkLoadBalancerRestart kills the load balancer of cluster cl with SIGKILL and waits until
// the local provider of the management cluster that holds cl (reached by mgmt) has started it
// again, within restartBound, counted the restart in cl's LocalCluster and said so in an Event,
// and the cluster's API server (reached by c) answers through it. pidPath is the load
// balancer's pid file.
func checkLoadBalancerRestart(t *testing.T, mgmt, c client.Client, cl *clusterv1.Cluster, pidPath string) repair {
	t.Helper()
	// The Cluster as its management cluster holds it now: a caller's copy may predate the
	// topology controller's infrastructureRef.
	current := &clusterv1.Cluster{}
	if err := mgmt.Get(t.Context(), client.ObjectKeyFromObject(cl), current); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: current.Namespace, Name: current.Spec.InfrastructureRef.Name}
	restarts := func() int32 {
		lc := &infrav1.LocalCluster{}
		if err := mgmt.Get(t.Context(), key, lc); err != nil {
			t.Fatal(err)
		}
		return lc.Status.LoadBalancerRestarts
	}
	before := restarts()
	r := killLoadBalancer(t, c, cl.Name, pidPath)
	checkRestartEvent(t, mgmt, key.Namespace, key.Name, "LoadBalancerRestarted")
	eventually(t, 10*time.Second, "the load balancer's restart counted", func() error {
		if n := restarts(); n != before+1 {
			return fmt.Errorf("LocalCluster %s counts %d load balancer restarts, %d before the kill", key, n, before)
		}
		return nil
	})
	return r
}

// killLoadBalancer kills the load balancer of the cluster name (its pid file pidPath) with
// SIGKILL, waits until it is started again within restartBound and the cluster's API server
// (reached by c) answers through it, and says when each came.
func killLoadBalancer(t *testing.T, c client.Client, name, pidPath string) repair {
	t.Helper()
	killed := time.Now()
	restarted := killAndWaitRestart(t, pidPath)
	eventually(t, 30*time.Second, "the API server of "+name+" through its restarted load balancer", func() error {
		return c.List(t.Context(), &corev1.NodeList{})
	})
	return repair{"load balancer", name, restarted, time.Since(killed)}
}

// checkRestartEvent waits for the provider's Event of reason about the object namespace/name, a
// warning that names the restart.
func checkRestartEvent(t *testing.T, c client.Client, namespace, name, reason string) {
	t.Helper()
	eventually(t, 30*time.Second, reason+" Event of "+name, func() error {
		events := &corev1.EventList{}
		if err := c.List(t.Context(), events, client.InNamespace(namespace)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == name && e.Reason == reason && e.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return fmt.Errorf("no %s Event about %s/%s", reason, namespace, name)
	})
}
