package node

import (
	"context"
	"fmt"
	"runtime"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/version"
)

// Labels, taints and identifiers of local nodes.
const (
	// ProviderIDPrefix starts the providerID of every local node: local://<cluster>/<node>.
	ProviderIDPrefix = "local://"
	// LabelControlPlane marks control-plane nodes, as kubeadm does.
	LabelControlPlane = "node-role.kubernetes.io/control-plane"
	// leaseDuration is how long a node's Lease holds, as the kubelet's.
	leaseDuration = 40
)

// ProviderID returns the providerID of a local node.
func ProviderID(clusterName, nodeName string) string {
	return fmt.Sprintf("%s%s/%s", ProviderIDPrefix, clusterName, nodeName)
}

// desiredNode returns the Node as the agent registers it.
func (a *Agent) desiredNode() *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname:   a.node.Name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: runtime.GOARCH,
	}
	for k, v := range a.node.Labels {
		labels[k] = v
	}
	var taints []corev1.Taint
	if a.node.Role == cluster.RoleControlPlane {
		labels[LabelControlPlane] = ""
		labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
		if a.taintControlPlane {
			taints = append(taints, corev1.Taint{Key: LabelControlPlane, Effect: corev1.TaintEffectNoSchedule})
		}
	}
	if a.node.Taints != nil {
		taints = *a.node.Taints
	}
	providerID := a.node.ProviderID
	if providerID == "" {
		providerID = ProviderID(a.spec.Name, a.node.Name)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   a.node.Name,
			Labels: labels,
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
		},
		Spec: corev1.NodeSpec{
			ProviderID: providerID,
			PodCIDR:    a.node.PodCIDR,
			PodCIDRs:   []string{a.node.PodCIDR},
			Taints:     taints,
		},
	}
}

// register creates the Node, or adopts the one that exists.
func (a *Agent) register(ctx context.Context) error {
	want := a.desiredNode()
	existing := &corev1.Node{}
	err := a.client.Get(ctx, client.ObjectKeyFromObject(want), existing)
	switch {
	case apierrors.IsNotFound(err):
		if err := a.client.Create(ctx, want); err != nil {
			return fmt.Errorf("failed to register Node %s: %w", want.Name, err)
		}
	case err != nil:
		return fmt.Errorf("failed to get Node %s: %w", want.Name, err)
	default:
		patch := client.MergeFrom(existing.DeepCopy())
		for k, v := range want.Labels {
			if existing.Labels == nil {
				existing.Labels = map[string]string{}
			}
			existing.Labels[k] = v
		}
		existing.Spec.ProviderID = want.Spec.ProviderID
		if err := a.client.Patch(ctx, existing, patch); err != nil {
			return fmt.Errorf("failed to update Node %s: %w", want.Name, err)
		}
	}
	return a.updateNodeStatus(ctx)
}

// updateNodeStatus reports the node Ready with its addresses, capacity and versions. Others write
// to the Node too (Cluster API's labels and annotations, the node lifecycle controller), so a
// conflict is read again and retried, as the kubelet does.
func (a *Agent) updateNodeStatus(ctx context.Context) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error { return a.writeNodeStatus(ctx) })
}

func (a *Agent) writeNodeStatus(ctx context.Context) error {
	node := &corev1.Node{}
	if err := a.client.Get(ctx, client.ObjectKey{Name: a.node.Name}, node); err != nil {
		return err
	}
	now := metav1.Now()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse(fmt.Sprint(runtime.NumCPU())),
		corev1.ResourceMemory:           resource.MustParse("32Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	condition := func(t corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string) corev1.NodeCondition {
		c := corev1.NodeCondition{Type: t, Status: status, Reason: reason, Message: message, LastHeartbeatTime: now, LastTransitionTime: now}
		for _, old := range node.Status.Conditions {
			if old.Type == t && old.Status == status {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		return c
	}
	node.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "slipway node agent is posting ready status"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: a.node.Address},
			{Type: corev1.NodeHostName, Address: a.node.Name},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: cluster.KubeletPort}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID:               a.node.Name,
			SystemUUID:              a.node.Name,
			BootID:                  a.bootID,
			KernelVersion:           kernelVersion(),
			OSImage:                 "slipway local runtime",
			ContainerRuntimeVersion: "slipway://" + version.Get(),
			KubeletVersion:          a.spec.NodeVersion(a.node),
			OperatingSystem:         "linux",
			Architecture:            runtime.GOARCH,
		},
	}
	return a.client.Status().Update(ctx, node)
}

// renewLease keeps the node's Lease in kube-node-lease fresh.
func (a *Agent) renewLease(ctx context.Context) error {
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: a.node.Name}
	now := metav1.NewMicroTime(time.Now())
	err := a.client.Get(ctx, key, lease)
	if apierrors.IsNotFound(err) {
		node := &corev1.Node{}
		if err := a.client.Get(ctx, client.ObjectKey{Name: a.node.Name}, node); err != nil {
			return err
		}
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
			}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(a.node.Name), LeaseDurationSeconds: ptr.To[int32](leaseDuration), RenewTime: &now},
		}
		return a.client.Create(ctx, lease)
	}
	if err != nil {
		return err
	}
	lease.Spec.HolderIdentity = ptr.To(a.node.Name)
	lease.Spec.LeaseDurationSeconds = ptr.To[int32](leaseDuration)
	lease.Spec.RenewTime = &now
	return a.client.Update(ctx, lease)
}
