package component

import (
	"slices"
	"testing"

	"github.com/slipway-dev/slipway/internal/images"
)

// TestImageArgs checks that slipway's binary started as a component image's /manager runs the
// component the image names with the container's arguments, and that it is the CLI otherwise.
func TestImageArgs(t *testing.T) {
	t.Setenv(images.EnvComponent, "tanzu-addons-manager")
	got := ImageArgs([]string{"/manager", "--metrics-bind-addr=0", "--help"})
	want := []string{"component", "run", "tanzu-addons-manager", "--", "--metrics-bind-addr=0", "--help"}
	if !slices.Equal(got, want) {
		t.Errorf("as /manager: %v, want %v", got, want)
	}
	if got := ImageArgs([]string{"/usr/local/bin/slipway", "version"}); got != nil {
		t.Errorf("as slipway: %v", got)
	}
	t.Setenv(images.EnvComponent, "")
	if got := ImageArgs([]string{"/manager"}); got != nil {
		t.Errorf("as /manager without a component: %v", got)
	}
}
