package cliutil

import (
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestFlagErrorNamesTheFlag(t *testing.T) {
	flags := map[string]string{"controlPlaneNodes": "--control-plane-nodes", "url": "--url"}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{field.Invalid(field.NewPath("controlPlaneNodes"), 0, "a cluster needs at least one control-plane node"),
			"--control-plane-nodes 0 is invalid: a cluster needs at least one control-plane node"},
		{fmt.Errorf("wrapped: %w", field.Required(field.NewPath("url"), "the imgpkg bundle")), "--url is required: the imgpkg bundle"},
		{field.Invalid(field.NewPath("other"), 1, "no flag"), "other: Invalid value: 1: no flag"},
		{errors.New("plain"), "plain"},
	} {
		if got := FlagError(tc.err, flags).Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	if FlagError(nil, flags) != nil {
		t.Errorf("nil is not an error")
	}
}
