package certmanager

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

func TestRenewalTime(t *testing.T) {
	notBefore := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		life time.Duration
		spec certificateSpec
		want time.Duration
		// ignored names the field ignoredRenewal reports; empty when it reports none.
		ignored string
	}{
		{"two thirds by default", 3 * time.Hour, certificateSpec{}, 2 * time.Hour, ""},
		{"renewBefore", 3 * time.Hour, certificateSpec{RenewBefore: "30m"}, 150 * time.Minute, ""},
		{"renewBefore equal to the life", 3 * time.Hour, certificateSpec{RenewBefore: "3h"}, 2 * time.Hour, "spec.renewBefore 3h0m0s is not between 0 and spec.duration 3h0m0s"},
		{"renewBefore over the life", 3 * time.Hour, certificateSpec{RenewBefore: "4h"}, 2 * time.Hour, "spec.renewBefore 4h0m0s"},
		{"negative renewBefore", 3 * time.Hour, certificateSpec{RenewBefore: "-1h"}, 2 * time.Hour, "spec.renewBefore -1h0m0s"},
		{"renewBefore not a duration", 3 * time.Hour, certificateSpec{RenewBefore: "soon"}, 2 * time.Hour, `spec.renewBefore "soon" is not a duration`},
		{"renewBeforePercentage", 4 * time.Hour, certificateSpec{RenewBeforePercentage: ptr.To[int32](25)}, 3 * time.Hour, ""},
		{"renewBeforePercentage of 100", 3 * time.Hour, certificateSpec{RenewBeforePercentage: ptr.To[int32](100)}, 2 * time.Hour, "spec.renewBeforePercentage 100"},
		{"invalid renewBefore, valid percentage", 4 * time.Hour, certificateSpec{RenewBefore: "5h", RenewBeforePercentage: ptr.To[int32](25)}, 3 * time.Hour,
			"spec.renewBeforePercentage 25 is used instead"},
		{"truncated to the second", 1000 * time.Millisecond, certificateSpec{}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := renewalTime(notBefore, notBefore.Add(tc.life), tc.spec); !got.Equal(notBefore.Add(tc.want)) {
				t.Errorf("renewal at %s, want %s", got.Sub(notBefore), tc.want)
			}
			err := tc.spec.ignoredRenewal(tc.life)
			switch {
			case tc.ignored == "" && err != nil:
				t.Errorf("reported %v", err)
			case tc.ignored != "" && (err == nil || !strings.Contains(err.Error(), tc.ignored)):
				t.Errorf("want %q reported, got %v", tc.ignored, err)
			}
		})
	}
}
