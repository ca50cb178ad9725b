package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/progress"
)

// NodePool is a node pool as `tanzu cluster node-pool set -f FILE` reads it: one machine
// deployment of a ClusterClass cluster's topology.
type NodePool struct {
	Name     string `json:"name"`
	Replicas *int32 `json:"replicas,omitempty"`
	// AZ is the machine deployment's failure domain.
	AZ          string `json:"az,omitempty"`
	WorkerClass string `json:"workerClass,omitempty"`
	// Labels go to the nodes through the ClusterClass's nodePoolLabels variable.
	Labels *map[string]string `json:"labels,omitempty"`
	// Taints go to the nodes through the ClusterClass's nodePoolTaints variable.
	Taints *[]corev1.Taint `json:"taints,omitempty"`
	// TKRResolver selects the pool's OS image (annotation run.tanzu.vmware.com/resolve-os-image).
	TKRResolver string `json:"tkrResolver,omitempty"`
	// BaseMachineDeployment is the node pool a new one copies.
	BaseMachineDeployment string `json:"baseMachineDeployment,omitempty"`
}

// ReadNodePool reads a node pool file; a field slipway does not know is refused by name.
func ReadNodePool(data []byte) (*NodePool, error) {
	np := &NodePool{}
	if err := yaml.UnmarshalStrict(data, np); err != nil {
		return nil, fmt.Errorf("the node pool file: %w (fields: name, replicas, az, workerClass, labels, taints, tkrResolver, baseMachineDeployment)", err)
	}
	var errs field.ErrorList
	if msgs := validation.IsDNS1123Label(np.Name); len(msgs) > 0 {
		errs = append(errs, field.Invalid(field.NewPath("name"), np.Name, strings.Join(msgs, "; ")))
	}
	if np.Replicas != nil && *np.Replicas < 0 {
		errs = append(errs, field.Invalid(field.NewPath("replicas"), *np.Replicas, "must be 0 or more"))
	}
	if err := errs.ToAggregate(); err != nil {
		return nil, fmt.Errorf("the node pool file: %w", err)
	}
	return np, nil
}

// SetNodePool adds the node pool to the cluster's topology, or changes the one of its name, as
// TKG does for a ClusterClass cluster: a new pool copies baseMachineDeployment, or starts from
// workerClass with one replica; replicas, az, workerClass and tkrResolver replace the pool's;
// labels are added to its nodePoolLabels and taints replace its nodePoolTaints (variable
// overrides of the machine deployment). The workers it adds to a cluster of the local provider
// are checked against the host's limits first (check, nil for none, prints through p). It says
// whether it created the pool. The pools are written whole, on the version read: when the
// Cluster changed since (its controllers write it all the time), it is read again and the change
// made again on it, as kubectl edit would be; the host, checked for the change's first try, is
// not checked again for the same change.
func SetNodePool(ctx context.Context, c client.Client, key client.ObjectKey, np *NodePool, check HostCheck, p *progress.Printer) (bool, error) {
	var created bool
	err := retry.RetryOnConflict(retry.DefaultRetry, func() (err error) {
		created, err = setNodePool(ctx, c, key, np, check, p)
		check = nil
		return err
	})
	return created, err
}

// setNodePool is one try of SetNodePool.
func setNodePool(ctx context.Context, c client.Client, key client.ObjectKey, np *NodePool, check HostCheck, p *progress.Printer) (bool, error) {
	cl, err := topologyOf(ctx, c, key)
	if err != nil {
		return false, err
	}
	before := cl.DeepCopy()
	mds := &cl.Spec.Topology.Workers.MachineDeployments
	var update, base *clusterv1.MachineDeploymentTopology
	for i := range *mds {
		if (*mds)[i].Name == np.Name {
			update = &(*mds)[i]
		}
		if np.BaseMachineDeployment != "" && (*mds)[i].Name == np.BaseMachineDeployment {
			base = (*mds)[i].DeepCopy()
		}
	}
	switch {
	case update != nil && np.BaseMachineDeployment != "":
		return false, fmt.Errorf("baseMachineDeployment: node pool %s exists, and a base is only for a new node pool: leave it out to change %s", np.Name, np.Name)
	case update == nil && np.BaseMachineDeployment != "" && base == nil:
		return false, fmt.Errorf("baseMachineDeployment: cluster %s has no node pool %s: use one of %s", key.Name, np.BaseMachineDeployment, strings.Join(poolNames(*mds), ", "))
	case update == nil && base == nil && np.WorkerClass == "":
		return false, fmt.Errorf("a new node pool needs baseMachineDeployment (one of %s) or workerClass (a machine deployment class of ClusterClass %s)",
			strings.Join(poolNames(*mds), ", "), cl.Spec.Topology.ClassRef.Name)
	case update == nil && base == nil:
		base = &clusterv1.MachineDeploymentTopology{Replicas: ptr.To[int32](1)}
	}
	pool := update
	if pool == nil {
		*mds = append(*mds, *base)
		pool = &(*mds)[len(*mds)-1]
		pool.Name = np.Name
	}
	if np.Replicas != nil {
		pool.Replicas = np.Replicas
	}
	if np.WorkerClass != "" {
		pool.Class = np.WorkerClass
	}
	if np.AZ != "" {
		pool.FailureDomain = np.AZ
	}
	if np.TKRResolver != "" {
		if pool.Metadata.Annotations == nil {
			pool.Metadata.Annotations = map[string]string{}
		}
		pool.Metadata.Annotations[runv1alpha3.AnnotationResolveOSImage] = np.TKRResolver
	}
	if np.Labels != nil {
		labels, err := poolLabels(pool, *np.Labels)
		if err != nil {
			return false, err
		}
		if err := setOverride(pool, "nodePoolLabels", labels); err != nil {
			return false, err
		}
	}
	if np.Taints != nil {
		if err := setOverride(pool, "nodePoolTaints", *np.Taints); err != nil {
			return false, err
		}
	}
	if err := checkVariables(ctx, c, cl, pool); err != nil {
		return false, err
	}
	if err := checkAdded(ctx, c, before, cl, check, p); err != nil {
		return false, err
	}
	if err := c.Patch(ctx, cl, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, fmt.Errorf("failed to set node pool %s of cluster %s: %w", np.Name, key.Name, err)
	}
	return update == nil, nil
}

// DeleteNodePool removes a node pool from the cluster's topology; the last one stays. Like
// SetNodePool, it tries again on a newer version of the Cluster.
func DeleteNodePool(ctx context.Context, c client.Client, key client.ObjectKey, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error { return deleteNodePool(ctx, c, key, name) })
}

// deleteNodePool is one try of DeleteNodePool.
func deleteNodePool(ctx context.Context, c client.Client, key client.ObjectKey, name string) error {
	cl, err := topologyOf(ctx, c, key)
	if err != nil {
		return err
	}
	before := cl.DeepCopy()
	mds := cl.Spec.Topology.Workers.MachineDeployments
	kept := slices.DeleteFunc(slices.Clone(mds), func(md clusterv1.MachineDeploymentTopology) bool { return md.Name == name })
	switch {
	case len(kept) == len(mds):
		return fmt.Errorf("could not find node pool %s to delete: cluster %s has %s", name, key.Name, strings.Join(poolNames(mds), ", "))
	case len(kept) == 0:
		return fmt.Errorf("unable to delete last node pool %s: a cluster keeps at least one; scale it with `slipway cluster scale %s -w N -p %s`", name, key.Name, name)
	}
	cl.Spec.Topology.Workers.MachineDeployments = kept
	if err := c.Patch(ctx, cl, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("unable to delete node pool %s of cluster %s: %w", name, key.Name, err)
	}
	return nil
}

// PoolStatus is a row of `cluster node-pool list`.
type PoolStatus struct {
	Name        string `json:"name"`
	Namespace   string `json:"namespace"`
	Phase       string `json:"phase"`
	Replicas    int32  `json:"replicas"`
	Ready       int32  `json:"ready"`
	Updated     int32  `json:"updated"`
	Unavailable int32  `json:"unavailable"`
}

// NodePools lists the node pools of a cluster with their MachineDeployments' state, in the order
// of the topology.
func NodePools(ctx context.Context, c client.Client, key client.ObjectKey) ([]PoolStatus, error) {
	cl, err := topologyOf(ctx, c, key)
	if err != nil {
		return nil, err
	}
	list := &clusterv1.MachineDeploymentList{}
	if err := c.List(ctx, list, client.InNamespace(key.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: key.Name}); err != nil {
		return nil, err
	}
	var out []PoolStatus
	for _, pool := range cl.Spec.Topology.Workers.MachineDeployments {
		row := PoolStatus{Name: pool.Name, Namespace: key.Namespace, Phase: "Pending"}
		for _, md := range list.Items {
			if md.Labels[clusterv1.ClusterTopologyMachineDeploymentNameLabel] != pool.Name {
				continue
			}
			row.Phase = md.Status.Phase
			row.Replicas = ptr.Deref(md.Status.Replicas, 0)
			row.Ready = ptr.Deref(md.Status.ReadyReplicas, 0)
			row.Updated = ptr.Deref(md.Status.UpToDateReplicas, 0)
			row.Unavailable = max(0, ptr.Deref(md.Spec.Replicas, 0)-ptr.Deref(md.Status.AvailableReplicas, 0))
		}
		out = append(out, row)
	}
	return out, nil
}

func topologyOf(ctx context.Context, c client.Client, key client.ObjectKey) (*clusterv1.Cluster, error) {
	cl, err := getCluster(ctx, c, key)
	if err != nil {
		return nil, err
	}
	if !cl.Spec.Topology.IsDefined() || len(cl.Spec.Topology.Workers.MachineDeployments) == 0 {
		return nil, fmt.Errorf("cluster %s has no topology workers: node pools are the machine deployments of a ClusterClass cluster", key)
	}
	return cl, nil
}

func poolNames(mds []clusterv1.MachineDeploymentTopology) []string {
	var names []string
	for _, md := range mds {
		names = append(names, md.Name)
	}
	return names
}

// poolLabels adds labels to the pool's nodePoolLabels (its override, else the cluster's value is
// not known here and the pool's own list starts empty), a label of the same key replaced.
func poolLabels(pool *clusterv1.MachineDeploymentTopology, add map[string]string) ([]map[string]string, error) {
	var labels []map[string]string
	for _, v := range pool.Variables.Overrides {
		if v.Name == "nodePoolLabels" {
			if err := json.Unmarshal(v.Value.Raw, &labels); err != nil {
				return nil, fmt.Errorf("node pool %s: its nodePoolLabels override is not a list of {key, value}: %w", pool.Name, err)
			}
		}
	}
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		labels = slices.DeleteFunc(labels, func(l map[string]string) bool { return l["key"] == k })
		labels = append(labels, map[string]string{"key": k, "value": add[k]})
	}
	return labels, nil
}

// setOverride sets a variable override of the pool's machine deployment.
func setOverride(pool *clusterv1.MachineDeploymentTopology, name string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return err
	}
	for i := range pool.Variables.Overrides {
		if pool.Variables.Overrides[i].Name == name {
			pool.Variables.Overrides[i].Value = apiextensionsv1.JSON{Raw: raw}
			return nil
		}
	}
	pool.Variables.Overrides = append(pool.Variables.Overrides, clusterv1.ClusterVariable{Name: name, Value: apiextensionsv1.JSON{Raw: raw}})
	return nil
}

// checkVariables refuses, before anything is written, a pool whose class or variable overrides
// the cluster's ClusterClass does not have, naming what it has.
func checkVariables(ctx context.Context, c client.Client, cl *clusterv1.Cluster, pool *clusterv1.MachineDeploymentTopology) error {
	cc := &clusterv1.ClusterClass{}
	ns := cl.Spec.Topology.ClassRef.Namespace
	if ns == "" {
		ns = cl.Namespace
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cl.Spec.Topology.ClassRef.Name}, cc); err != nil {
		return fmt.Errorf("the ClusterClass of cluster %s: %w", cl.Name, err)
	}
	var classes []string
	for _, md := range cc.Spec.Workers.MachineDeployments {
		classes = append(classes, md.Class)
	}
	if !slices.Contains(classes, pool.Class) {
		return fmt.Errorf("workerClass: ClusterClass %s has no machine deployment class %q: use one of %s", cc.Name, pool.Class, strings.Join(classes, ", "))
	}
	var variables []string
	for _, v := range cc.Spec.Variables {
		variables = append(variables, v.Name)
	}
	for _, o := range pool.Variables.Overrides {
		if !slices.Contains(variables, o.Name) {
			what := map[string]string{"nodePoolLabels": "labels", "nodePoolTaints": "taints"}[o.Name]
			return fmt.Errorf("%s: ClusterClass %s has no %s variable, so its node pools cannot set them", what, cc.Name, o.Name)
		}
	}
	return nil
}
