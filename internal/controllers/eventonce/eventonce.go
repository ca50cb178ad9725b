// Package eventonce records a Warning Event on transitions only, as docs/development.md asks of
// every reconciler: an object that fails again and again for one cause is told once, and again
// when the cause changes or after a success in between.
package eventonce

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Warnings remembers the last Warning recorded on each object, in this process: a restarted
// controller tells the cause once more.
type Warnings struct {
	mu   sync.Mutex
	last map[types.UID]string
}

// Warn records a Warning of the reason and note on obj unless the last one recorded on it since
// its last Clear said the same.
func (w *Warnings) Warn(r events.EventRecorder, obj client.Object, related runtime.Object, reason, action, note string, args ...any) {
	text := reason + ": " + fmt.Sprintf(note, args...)
	w.mu.Lock()
	if w.last == nil {
		w.last = map[types.UID]string{}
	}
	same := w.last[obj.GetUID()] == text
	w.last[obj.GetUID()] = text
	w.mu.Unlock()
	if !same {
		r.Eventf(obj, related, corev1.EventTypeWarning, reason, action, note, args...)
	}
}

// Clear forgets obj's last Warning: it succeeded, and a failure after is a transition again.
func (w *Warnings) Clear(obj client.Object) {
	w.mu.Lock()
	delete(w.last, obj.GetUID())
	w.mu.Unlock()
}
