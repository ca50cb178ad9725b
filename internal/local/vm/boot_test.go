package vm

import (
	"sync/atomic"
	"testing"
)

// TestBootRecordIsNeverSeenHalfWritten reads the boot record while it is written again and
// again, as the cluster's wait for its nodes does while a node finishes cloud-init: a reader
// must see no record or a whole one, never an empty one (which reads as a failed boot).
func TestBootRecordIsNeverSeenHalfWritten(t *testing.T) {
	dir := t.TempDir()
	var stop atomic.Bool
	done := make(chan error)
	go func() {
		for i := 0; i < 2000; i++ {
			if err := recordBoot(dir, "finished"); err != nil {
				done <- err
				return
			}
		}
		stop.Store(true)
		done <- nil
	}()
	reads := 0
	for !stop.Load() {
		if status, ok := Booted(dir); ok {
			reads++
			if status != "finished" {
				t.Fatalf("read %d of the boot record saw %q while it was written, want \"finished\"", reads, status)
			}
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if reads == 0 {
		t.Fatal("the boot record was never read while it was written")
	}
}
