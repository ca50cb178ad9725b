package proc

import (
	"path/filepath"
	"testing"
	"time"
)

func TestLockIsHeldUntilReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dir", "blocks.lock")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	taken := make(chan func())
	go func() {
		second, err := Lock(path)
		if err != nil {
			t.Error(err)
		}
		taken <- second
	}()
	select {
	case <-taken:
		t.Fatal("a second Lock was taken while the first was held")
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	unlock() // a second release is harmless
	select {
	case second := <-taken:
		second()
	case <-time.After(5 * time.Second):
		t.Fatal("the second Lock was not taken after the first was released")
	}
}
