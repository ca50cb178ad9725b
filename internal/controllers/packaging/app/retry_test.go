package app

import (
	"testing"
	"time"
)

// TestFailedAppsBackOff checks the retry of a failed App doubles from 2 s and stops at its sync
// period, as kapp-controller's does.
func TestFailedAppsBackOff(t *testing.T) {
	for failures, want := range map[int]time.Duration{1: 2 * time.Second, 3: 8 * time.Second, 9: 512 * time.Second, 10: 10 * time.Minute, 62: 10 * time.Minute} {
		if got := retryAfter(failures, 10*time.Minute); got != want {
			t.Errorf("retryAfter(%d, 10m) = %s, want %s", failures, got, want)
		}
	}
	if got := retryAfter(2, 30*time.Second); got != 4*time.Second {
		t.Errorf("retryAfter(2, 30s) = %s", got)
	}
}
