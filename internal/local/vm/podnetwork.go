package vm

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/config"
)

// adminConfig is the kubeconfig kubeadm leaves on a control-plane node.
const adminConfig = "/etc/kubernetes/admin.conf"

// ensurePodNetwork applies the runtime's pod network (config.PodNetwork) at every boot of a
// control-plane node, once its API server answers, as kind applies its CNI after kubeadm init;
// applying it again changes nothing. A worker, which has no admin kubeconfig, returns at once. It retries until it applies or the
// context ends.
func ensurePodNetwork(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx)
	if _, err := os.Stat(adminConfig); err != nil {
		return
	}
	objs, err := utilyaml.ToUnstructured(config.PodNetwork)
	if err != nil {
		log.Error(err, "The pod network's manifest is broken")
		return
	}
	var last string
	for ctx.Err() == nil {
		err := applyObjects(ctx, objs)
		if err == nil {
			log.Info("Applied the pod network")
			return
		}
		if err.Error() != last {
			log.Info("Cannot apply the pod network yet; retrying", "error", err.Error())
			last = err.Error()
		}
		sleep(ctx, 2*time.Second)
	}
}

func applyObjects(ctx context.Context, objs []unstructured.Unstructured) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", adminConfig)
	if err != nil {
		return fmt.Errorf("failed to read %s: %w", adminConfig, err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("failed to reach the API server: %w", err)
	}
	for i := range objs {
		obj := &objs[i]
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj.DeepCopy()), client.FieldOwner("slipway-local-node"), client.ForceOwnership); err != nil {
			return fmt.Errorf("failed to apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}
