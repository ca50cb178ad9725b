package managementcluster

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/slipway-dev/slipway/internal/scheme"
)

// TestCEIP records the participation and reads it back: Opt-out until set, then as set.
func TestCEIP(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	if got, err := CEIP(t.Context(), c); err != nil || got != CEIPOptOut {
		t.Fatalf("before any choice: %q, %v", got, err)
	}
	for _, tc := range []struct {
		optIn bool
		want  string
	}{{true, CEIPOptIn}, {false, CEIPOptOut}, {true, CEIPOptIn}} {
		if err := SetCEIP(t.Context(), c, tc.optIn); err != nil {
			t.Fatal(err)
		}
		if got, err := CEIP(t.Context(), c); err != nil || got != tc.want {
			t.Errorf("after set %v: %q, %v", tc.optIn, got, err)
		}
	}
}
