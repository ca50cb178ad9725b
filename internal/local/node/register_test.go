package node

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/slipway-dev/slipway/internal/local/cluster"
)

// A Node that another writer changed between the agent's read and its status update is read
// again: the agent's first registration used to exit on the conflict, leaving the node without
// an agent until the provider started it again.
func TestRegisterRetriesAConflict(t *testing.T) {
	conflicts := 1
	c := fake.NewClientBuilder().WithStatusSubresource(&corev1.Node{}).WithInterceptorFuncs(interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if conflicts > 0 {
				conflicts--
				return apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, obj.GetName(), nil)
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}).Build()
	a := &Agent{
		spec:   &cluster.Spec{Name: "wc", KubernetesVersion: "v1.35.4"},
		node:   cluster.NodeSpec{Name: "wc-md-0", Role: cluster.RoleWorker, Address: "172.18.2.3", PodCIDR: "10.244.2.0/24"},
		client: c,
	}
	if err := a.register(t.Context()); err != nil {
		t.Fatalf("register: %v", err)
	}
	if conflicts != 0 {
		t.Fatal("the status update was never refused: the test proves nothing")
	}
	node := &corev1.Node{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: "wc-md-0"}, node); err != nil {
		t.Fatal(err)
	}
	if !nodeReady(node) {
		t.Errorf("the Node is not Ready after the retry: %+v", node.Status.Conditions)
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
