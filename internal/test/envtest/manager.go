package envtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// StartManager runs a controller manager with the given reconcilers against the environment
// until it stops. It panics on failure, as it runs from TestMain's setup.
func (e *Environment) StartManager(setups ...func(ctrl.Manager) error) ctrl.Manager {
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{Scheme: e.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		panic(fmt.Sprintf("failed to create manager: %v", err))
	}
	for _, setup := range setups {
		if err := setup(mgr); err != nil {
			panic(fmt.Sprintf("failed to set up a reconciler: %v", err))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	e.OnStop(func() { cancel(); <-done })
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			panic(fmt.Sprintf("manager stopped: %v", err))
		}
	}()
	return mgr
}

// Eventually polls f every 200ms until it returns nil, and fails the test with f's last error
// when the timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	EventuallyEvery(t, timeout, 200*time.Millisecond, what, f)
}

// EventuallyEvery is Eventually polling every period, for checks that read much of a cluster.
func EventuallyEvery(t testing.TB, timeout, period time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(period)
	}
}

// WriteKubeconfig writes a kubeconfig for the environment's API server into a new temporary
// directory, removed when the environment stops, and returns its path.
func (e *Environment) WriteKubeconfig() (string, error) {
	dir, err := os.MkdirTemp("", "slipway-envtest-kubeconfig-")
	if err != nil {
		return "", err
	}
	e.OnStop(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "kubeconfig")
	return path, clientcmd.WriteToFile(e.kubeconfig(), path)
}

// Kubeconfig returns a kubeconfig of the environment's API server, as Cluster API stores it in
// a {cluster}-kubeconfig Secret.
func (e *Environment) Kubeconfig() ([]byte, error) {
	return clientcmd.Write(e.kubeconfig())
}

func (e *Environment) kubeconfig() clientcmdapi.Config {
	return clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"envtest": {Server: e.Config.Host, CertificateAuthorityData: e.Config.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"admin": {ClientCertificateData: e.Config.CertData, ClientKeyData: e.Config.KeyData}},
		Contexts:       map[string]*clientcmdapi.Context{"envtest": {Cluster: "envtest", AuthInfo: "admin"}},
		CurrentContext: "envtest",
	}
}
