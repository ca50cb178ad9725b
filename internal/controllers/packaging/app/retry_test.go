package app

import (
	"testing"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func TestSyncPeriodHasKappControllersFloor(t *testing.T) {
	for period, want := range map[time.Duration]time.Duration{time.Millisecond: 30 * time.Second, 0: 30 * time.Second, 45 * time.Second: 45 * time.Second} {
		a := &kappctrlv1alpha1.App{}
		if period > 0 {
			a.Spec.SyncPeriod = &metav1.Duration{Duration: period}
		}
		if got := syncPeriod(a); got != want {
			t.Errorf("syncPeriod %s is used as %s, want %s", period, got, want)
		}
	}
}
