package propagation_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/controllers/propagation"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

const configuration = `
- source:
    apiVersion: v1
    kind: ConfigMap
    namespace: prop-source
    labelSelector: propagate
  target:
    namespaceLabelSelector: '!cluster.x-k8s.io/provider, kubernetes.io/metadata.name notin (kube-system, kube-public, kube-node-lease)'
    detectAndReplaceSourceNSRef: true
`

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		entries, err := propagation.Parse([]byte(configuration))
		if err != nil {
			panic(err)
		}
		e.StartManager(func(mgr ctrl.Manager) error { return propagation.SetupWithManager(mgr, entries) })
	}))
}

func createNamespace(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil {
		t.Fatal(err)
	}
}

// copyIn waits for the copy in namespace to hold want as its "ref" value.
func copyIn(t *testing.T, namespace, want string) {
	t.Helper()
	envtest.Eventually(t, 20*time.Second, "copy in "+namespace, func() error {
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: "class"}, cm); err != nil {
			return err
		}
		if cm.Data["ref"] != want || cm.Annotations[propagation.AnnotationSource] != "prop-source/class" {
			return fmt.Errorf("copy holds %v, annotations %v", cm.Data, cm.Annotations)
		}
		return nil
	})
}

func absent(t *testing.T, namespace, name string) {
	t.Helper()
	envtest.Eventually(t, 20*time.Second, name+" absent from "+namespace, func() error {
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("present: %v", err)
		}
		return nil
	})
}

func TestPropagation(t *testing.T) {
	ctx := t.Context()
	createNamespace(t, "prop-source", nil)
	createNamespace(t, "prop-a", nil)
	createNamespace(t, "prop-provider", map[string]string{"cluster.x-k8s.io/provider": "cluster-api"})
	createNamespace(t, "prop-taken", nil)
	// An object of the source's name that is not a copy is left alone.
	if err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "prop-taken", Name: "class"}, Data: map[string]string{"ref": "mine"}}); err != nil {
		t.Fatal(err)
	}
	source := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prop-source", Name: "class", Labels: map[string]string{"propagate": ""}},
		Data:       map[string]string{"ref": "prop-source", "other": "kept"},
	}
	ignored := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "prop-source", Name: "unlabelled"}}
	for _, o := range []client.Object{source, ignored} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	copyIn(t, "prop-a", "prop-a")
	copyIn(t, "default", "default")
	createNamespace(t, "prop-b", nil)
	copyIn(t, "prop-b", "prop-b")
	absent(t, "prop-provider", "class")
	absent(t, "kube-system", "class")
	absent(t, "prop-a", "unlabelled")
	// Both are Events on the source: the copies made, and the namespace where the name is taken.
	expectEvent(t, propagation.ReasonPropagated, "Copied to namespace prop-b")
	expectEvent(t, propagation.ReasonNameTaken,
		"Not copied to namespace prop-taken: prop-taken/class there is not a copy of this one; rename or delete it to receive the copy")

	// The source changes: the copies follow. A copy edited by hand is put back.
	source.Data["other"] = "changed"
	if err := env.Client.Update(ctx, source); err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, 20*time.Second, "copies updated", func() error {
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "prop-b", Name: "class"}, cm); err != nil {
			return err
		}
		if cm.Data["other"] != "changed" {
			return fmt.Errorf("copy holds %v", cm.Data)
		}
		return nil
	})
	edited := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "prop-a", Name: "class"}, edited); err != nil {
		t.Fatal(err)
	}
	edited.Data["ref"] = "by hand"
	if err := env.Client.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	copyIn(t, "prop-a", "prop-a")
	// Converged, the copies are written no more.
	envtest.ExpectStill(t, 3*time.Second, envtest.On(env.Client,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "prop-a", Name: "class"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "prop-b", Name: "class"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "class"}}))

	// The source goes: so do the copies, and only they.
	if err := env.Client.Delete(ctx, source); err != nil {
		t.Fatal(err)
	}
	absent(t, "prop-a", "class")
	absent(t, "prop-b", "class")
	taken := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "prop-taken", Name: "class"}, taken); err != nil || taken.Data["ref"] != "mine" {
		t.Fatalf("an object that is not a copy was touched: %v %v", taken.Data, err)
	}
}

// expectEvent waits for an Event of a reason about the source prop-source/class, with the note.
func expectEvent(t *testing.T, reason, note string) {
	t.Helper()
	envtest.ExpectEvent(t, env.Client, "prop-source", "class", "", reason, func(n string) bool { return n == note })
}

func TestParseSaysWhatIsWrong(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{"[]", "has no entries"},
		{"- source: {apiVersion: v1, kind: ConfigMap}", "entry 0: source.namespace is empty"},
		{"- source: {apiVersion: v1, kind: ConfigMap, namespace: x, labelSelector: 'a in'}", "entry 0: source.labelSelector \"a in\""},
		{"- source: {apiVersion: v1, kind: ConfigMap, namespace: x}\n  target: {namespaceSelector: x}", "unknown field \"namespaceSelector\""},
	} {
		_, err := propagation.Parse([]byte(tc.config))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: want an error saying %q, got %v", tc.config, tc.want, err)
		}
	}
}
