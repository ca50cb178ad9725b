package vm

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/local/podnet"
)

// adminConfig is the kubeconfig kubeadm leaves on a control-plane node.
const adminConfig = "/etc/kubernetes/admin.conf"

// ensurePodNetwork applies the runtime's pod network (podnet.Manifest) at every boot of a
// control-plane node, once its API server answers, as kind applies its CNI after kubeadm init;
// applying it again changes nothing. A worker, which has no admin kubeconfig, returns at once. It retries until it applies or the
// context ends.
func ensurePodNetwork(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx)
	if _, err := os.Stat(adminConfig); err != nil {
		return
	}
	objs, err := utilyaml.ToUnstructured(podnet.Manifest)
	if err != nil {
		log.Error(err, "The pod network's manifest is broken")
		return
	}
	var last string
	for ctx.Err() == nil {
		cfg, err := clientcmd.BuildConfigFromFlags("", adminConfig)
		if err != nil {
			err = fmt.Errorf("failed to read %s: %w", adminConfig, err)
		} else if err = directToAPIServer(objs, cfg); err == nil {
			err = applyObjects(ctx, objs, cfg)
		}
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

// directToAPIServer points the pod network's containers at the cluster's control-plane endpoint,
// the server of the admin kubeconfig, as kind points kindnet at its own: their in-cluster
// configuration would otherwise reach the API server through the kubernetes Service, which
// works only once kube-proxy has programmed the node, and a new node waited 30 s for its first
// connection to time out.
func directToAPIServer(objs []unstructured.Unstructured, cfg *rest.Config) error {
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Hostname() == "" || u.Port() == "" {
		return fmt.Errorf("the server %q of %s has no host and port", cfg.Host, adminConfig)
	}
	for i := range objs {
		if objs[i].GetKind() != "DaemonSet" {
			continue
		}
		containers, _, err := unstructured.NestedSlice(objs[i].Object, "spec", "template", "spec", "containers")
		if err != nil {
			return err
		}
		for j := range containers {
			c, ok := containers[j].(map[string]any)
			if !ok {
				continue
			}
			env, _ := c["env"].([]any)
			c["env"] = append(withoutServiceEnv(env),
				map[string]any{"name": "KUBERNETES_SERVICE_HOST", "value": u.Hostname()},
				map[string]any{"name": "KUBERNETES_SERVICE_PORT", "value": u.Port()})
		}
		if err := unstructured.SetNestedSlice(objs[i].Object, containers, "spec", "template", "spec", "containers"); err != nil {
			return err
		}
	}
	return nil
}

// withoutServiceEnv drops what directToAPIServer set before from env.
func withoutServiceEnv(env []any) []any {
	var out []any
	for _, e := range env {
		if m, ok := e.(map[string]any); ok && (m["name"] == "KUBERNETES_SERVICE_HOST" || m["name"] == "KUBERNETES_SERVICE_PORT") {
			continue
		}
		out = append(out, e)
	}
	return out
}

func applyObjects(ctx context.Context, objs []unstructured.Unstructured, cfg *rest.Config) error {
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
