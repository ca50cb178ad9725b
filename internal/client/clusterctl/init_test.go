package clusterctl

import (
	"io"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// TestTheIPAMProvidersWaitGoesOnBeside checks that waitForProviders returns once the providers
// of Cluster API's objects are available, while an IPAM provider is not yet, and that the wait it
// returns ends only when that one is available too.
func TestTheIPAMProvidersWaitGoesOnBeside(t *testing.T) {
	deployment := func(provider string, available int32) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: provider + "-system", Name: provider + "-controller-manager",
				Labels: map[string]string{clusterv1.ProviderNameLabel: provider}},
			Status: appsv1.DeploymentStatus{AvailableReplicas: available},
		}
	}
	ipam := deployment("ipam-in-cluster", 0)
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(deployment("cluster-api", 1), ipam).Build()
	providers := []installed{
		{name: "cluster-api", namespace: "cluster-api-system"},
		{name: "ipam-in-cluster", namespace: "ipam-in-cluster-system", later: true},
	}
	ctx := t.Context()

	start := time.Now()
	rest, err := waitForProviders(ctx, c, providers, time.Minute, progress.ForWriter(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("waitForProviders returned after %s: it waited for the IPAM provider", took)
	}
	done := make(chan error, 1)
	go func() { done <- rest() }()
	select {
	case err := <-done:
		t.Fatalf("the IPAM provider's wait ended (%v) before its Deployment was available", err)
	case <-time.After(time.Second):
	}
	ipam.Status.AvailableReplicas = 1
	if err := c.Status().Update(ctx, ipam); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the IPAM provider's wait did not end after its Deployment became available")
	}
}

// TestAFailedProviderEndsTheWait checks that a provider of Cluster API's objects that never
// becomes available fails waitForProviders itself, naming it and not the IPAM provider, and that
// TKG's line of success is not said.
func TestAFailedProviderEndsTheWait(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	var out strings.Builder
	providers := []installed{
		{name: "cluster-api", namespace: "cluster-api-system"},
		{name: "ipam-in-cluster", namespace: "ipam-in-cluster-system", later: true},
	}
	_, err := waitForProviders(t.Context(), c, providers, time.Second, progress.ForWriter(&out))
	if err == nil {
		t.Fatal("waitForProviders passed with no Deployment of cluster-api")
	}
	if want := "provider cluster-api is not available after 1s"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
	if strings.Contains(err.Error(), "ipam-in-cluster") {
		t.Fatalf("error %q names the IPAM provider, whose wait goes on beside", err)
	}
	if strings.Contains(out.String(), "Success waiting on all providers.") {
		t.Fatalf("a failed wait said it succeeded:\n%s", out.String())
	}
}
