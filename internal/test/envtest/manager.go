package envtest

import (
	"context"
	"fmt"
	"testing"
	"time"

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
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
