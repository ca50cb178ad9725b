package envtest

import (
	"fmt"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ExpectEvent waits up to 20 s for an Event of the type (any when empty) and reason regarding the
// object (namespace, empty for every one, and name) whose note match accepts (nil accepts any), and returns its note; it fails
// the test with the notes of that reason it found instead.
func ExpectEvent(t testing.TB, c client.Reader, namespace, name, typ, reason string, match func(note string) bool) string {
	t.Helper()
	var note string
	Eventually(t, 20*time.Second, fmt.Sprintf("a %s Event %s about %s/%s", typ, reason, namespace, name), func() error {
		list := &eventsv1.EventList{}
		if err := c.List(t.Context(), list, client.InNamespace(namespace)); err != nil {
			return err
		}
		var notes []string
		for _, e := range list.Items {
			if typ != "" && e.Type != typ || e.Reason != reason || e.Regarding.Name != name {
				continue
			}
			if match == nil || match(e.Note) {
				note = e.Note
				return nil
			}
			notes = append(notes, e.Note)
		}
		return fmt.Errorf("found %q", notes)
	})
	return note
}
