package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Upgrade is one upgrade to run: the release it goes to and its Kubernetes version.
type Upgrade struct {
	TKR     string // the release's name, v1.35.4---vmware.1-tkg.1
	Version string // the release's version, v1.35.4+vmware.1-tkg.1
	// Kubernetes is the release's Kubernetes version, which the Cluster's topology takes.
	Kubernetes string
	// OSImage, when set, selects the OS image of every part of the cluster on the new release
	// (--os-name): the value of the run.tanzu.vmware.com/resolve-os-image annotations.
	OSImage string
}

// PlanUpgrade chooses the release a cluster upgrades to from its UpdatesAvailable condition:
// the newest, or the one a name or prefix (--tkr) selects, as TKG does.
func PlanUpgrade(ctx context.Context, c client.Client, key client.ObjectKey, asked string) (*Upgrade, error) {
	updates, err := availableVersions(ctx, c, key)
	if err != nil {
		return nil, err
	}
	chosen := updates[len(updates)-1]
	if asked != "" {
		chosen = ""
		for _, u := range updates {
			name := tkg.VersionLabel(u)
			if tkg.HasVersionPrefix(u, asked) || tkg.HasVersionPrefix(name, asked) {
				chosen = u
			}
		}
		if chosen == "" {
			return nil, fmt.Errorf("cluster cannot be upgraded, no compatible upgrades found matching the TKR name/prefix '%s', available compatible upgrades %v", asked, updates)
		}
	}
	release := &runv1alpha3.TanzuKubernetesRelease{}
	name := tkg.VersionLabel(chosen)
	if err := c.Get(ctx, client.ObjectKey{Name: name}, release); err != nil {
		return nil, fmt.Errorf("the release %s: %w", name, err)
	}
	return &Upgrade{TKR: name, Version: chosen, Kubernetes: release.Spec.Kubernetes.Version}, nil
}

// availableVersions reads the release versions the TKR service offers a cluster, oldest first,
// from its UpdatesAvailable condition ("[v1.35.4+vmware.1-tkg.1 …]"); none is TKG's error.
func availableVersions(ctx context.Context, c client.Client, key client.ObjectKey) ([]string, error) {
	cl, err := getCluster(ctx, c, key)
	if err != nil {
		return nil, err
	}
	var versions []string
	if conditions.IsTrue(cl, runv1alpha3.ConditionUpdatesAvailable) {
		versions = strings.Fields(strings.Trim(conditions.GetMessage(cl, runv1alpha3.ConditionUpdatesAvailable), "[]"))
	}
	// Just after an upgrade, the condition may still list the release the cluster is now on, or
	// one between the old and the new: neither is an upgrade.
	if current := tkg.VersionFromLabel(cl.Labels[runv1alpha3.LabelTKR]); current != "" {
		versions = slices.DeleteFunc(versions, func(v string) bool { return tkg.CompareVersions(v, current) <= 0 })
	}
	if len(versions) == 0 {
		return nil, noUpgradesError{key}
	}
	return versions, nil
}

// noUpgradesError is TKG's answer for a cluster that has no newer release.
type noUpgradesError struct{ key client.ObjectKey }

func (e noUpgradesError) Error() string {
	return fmt.Sprintf("no available upgrades for cluster '%s', namespace '%s'", e.key.Name, e.key.Namespace)
}

// IsNoUpgrades says whether err is the answer for a cluster that has no newer release.
func IsNoUpgrades(err error) bool { return errors.As(err, new(noUpgradesError)) }

// AvailableUpgrades returns the releases a cluster can upgrade to, as `tanzu cluster
// available-upgrades get` lists them; none is the error TKG prints.
func AvailableUpgrades(ctx context.Context, c client.Client, key client.ObjectKey) ([]runv1alpha3.TanzuKubernetesRelease, error) {
	updates, err := availableVersions(ctx, c, key)
	if err != nil {
		return nil, err
	}
	releases := &runv1alpha3.TanzuKubernetesReleaseList{}
	if err := c.List(ctx, releases); err != nil {
		return nil, err
	}
	var out []runv1alpha3.TanzuKubernetesRelease
	for _, v := range updates {
		for _, r := range releases.Items {
			if r.Spec.Version == v {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// RunUpgrade moves the cluster's topology to the release's Kubernetes version (the TKR resolver
// and the addons manager follow it), then waits, as TKG does, for the control-plane machines,
// the workers and the release's core packages. The caller says it succeeded, in its words for a
// workload or a management cluster.
func RunUpgrade(ctx context.Context, c client.Client, key client.ObjectKey, u *Upgrade, timeout time.Duration, p *progress.Printer) error {
	p.Infof("Upgrading kubernetes cluster to `%s` version, tkr version: `%s`", u.Kubernetes, u.Version)
	cl, err := getCluster(ctx, c, key)
	if err != nil {
		return err
	}
	before := cl.DeepCopy()
	cl.Spec.Topology.Version = u.Kubernetes
	if u.OSImage != "" {
		if err := selectOSImage(cl, u.OSImage); err != nil {
			return err
		}
	}
	// Unlike TKG's ClusterClass upgrades, the upgrade is recorded, so that `cluster list` can
	// say updateStalled when nothing waits on it any more.
	annotations := tkg.OperationAnnotations(tkg.OperationUpgrade, time.Now(), timeout)
	if cl.Annotations == nil {
		cl.Annotations = map[string]string{}
	}
	maps.Copy(cl.Annotations, annotations)
	if err := c.Patch(ctx, cl, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("the upgrade was refused: %w", err)
	}
	w := waiter{c: c, key: key, timeout: timeout, p: p}
	err = p.Run(ctx,
		progress.NamedStep{Name: "control plane", Run: func(ctx context.Context) error {
			p.Infof("Waiting for kubernetes version to be updated for control plane nodes...")
			return w.machinesAt(ctx, u.Kubernetes, true)
		}},
		progress.NamedStep{Name: "workers", Run: func(ctx context.Context) error {
			p.Infof("Waiting for kubernetes version to be updated for worker nodes...")
			return w.machinesAt(ctx, u.Kubernetes, false)
		}},
		progress.NamedStep{Name: "cluster bootstrap", Run: func(ctx context.Context) error { return w.resolved(ctx, u.TKR) }},
		progress.NamedStep{Name: "core packages", Run: w.corePackages},
		progress.NamedStep{Name: "record", Run: func(ctx context.Context) error { return clearOperation(ctx, c, key, tkg.OperationUpgrade) }},
	)
	if err != nil {
		return &WaysOutError{Err: err, WaysOut: fmt.Sprintf("The upgrade to %[3]s is under way: the management cluster goes on rolling the machines.\n"+
			"To see where it is:\n    slipway cluster get %[1]s -n %[2]s", key.Name, key.Namespace, u.Kubernetes)}
	}
	return nil
}

// selectOSImage points the control plane and every machine deployment of a cluster whose
// parts resolve an OS image (vSphere's) at another one.
func selectOSImage(cl *clusterv1.Cluster, selector string) error {
	topology := &cl.Spec.Topology
	if _, ok := topology.ControlPlane.Metadata.Annotations[runv1alpha3.AnnotationResolveOSImage]; !ok {
		return fmt.Errorf("--os-name: the nodes of cluster %s take no OS image (its infrastructure is %s, not vSphere VMs): leave the --os-* flags out",
			cl.Name, cl.Spec.InfrastructureRef.Kind)
	}
	topology.ControlPlane.Metadata.Annotations[runv1alpha3.AnnotationResolveOSImage] = selector
	for i := range topology.Workers.MachineDeployments {
		md := &topology.Workers.MachineDeployments[i]
		if md.Metadata.Annotations == nil {
			md.Metadata.Annotations = map[string]string{}
		}
		md.Metadata.Annotations[runv1alpha3.AnnotationResolveOSImage] = selector
	}
	return nil
}

// clearOperation removes a finished operation's TKGOperationInfo, so that a later rollout is not
// read against it. It is the flow's last write, which meets the webhooks on Clusters just after
// their pods moved to the new nodes of an upgrade: a refusal of the moment is tried again.
func clearOperation(ctx context.Context, c client.Client, key client.ObjectKey, operation string) error {
	return whileTransient(ctx, func(ctx context.Context) error {
		cl := &clusterv1.Cluster{}
		if err := c.Get(ctx, key, cl); err != nil {
			return err
		}
		before := cl.DeepCopy()
		if !tkg.EndOperation(cl.Annotations, operation) {
			return nil
		}
		return c.Patch(ctx, cl, client.MergeFrom(before))
	})
}

// whileTransient runs write until it succeeds, fails for good, or has met refusals of the moment
// for transientTimeout (or ctx ends): then it returns the last refusal.
func whileTransient(ctx context.Context, write func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, transientInterval, transientTimeout, true, func(ctx context.Context) (bool, error) {
		last = write(ctx)
		if last != nil && isTransient(last) {
			return false, nil
		}
		return true, last
	})
	if wait.Interrupted(err) && last != nil {
		return last
	}
	return err
}

// A write that met a refusal of the moment is tried every transientInterval for transientTimeout,
// longer than a webhook's pod takes to start on a new node.
const (
	transientInterval = 2 * time.Second
	transientTimeout  = 90 * time.Second
)

// isTransient says whether the API server refused a write for a moment: a webhook it could not
// call (an internal error), or it was unavailable, timed out or busy.
func isTransient(err error) bool {
	return apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err)
}

// machinesAt waits until every control-plane machine (or every worker) runs the version and is
// Ready, and no older one is left.
func (w waiter) machinesAt(ctx context.Context, version string, controlPlane bool) error {
	what := "worker"
	if controlPlane {
		what = "control-plane"
	}
	var why string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, w.timeout, true, func(ctx context.Context) (bool, error) {
		if cl := (&clusterv1.Cluster{}); w.c.Get(ctx, w.key, cl) == nil {
			w.observed(ctx, cl)
		}
		list := &clusterv1.MachineList{}
		if err := w.c.List(ctx, list, client.InNamespace(w.key.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: w.key.Name}); err != nil {
			why = err.Error()
			return false, nil
		}
		n := 0
		for _, m := range list.Items {
			if _, cp := m.Labels[clusterv1.MachineControlPlaneLabel]; cp != controlPlane {
				continue
			}
			n++
			if m.Spec.Version != version || !conditions.IsTrue(&m, clusterv1.MachineReadyCondition) {
				why = fmt.Sprintf("%s machine %s is at %s, Ready %v", what, m.Name, m.Spec.Version, conditions.IsTrue(&m, clusterv1.MachineReadyCondition))
				return false, nil
			}
		}
		why = "no " + what + " machine yet"
		return n > 0 || !controlPlane, nil
	})
	if err != nil {
		if paused := w.pausedFor(ctx); paused != "" {
			why = paused
		}
	}
	if err != nil {
		return fmt.Errorf("the %s machines did not reach %s: %s (after %s); `slipway cluster get %s -n %s` shows them", what, version, why, w.timeout, w.key.Name, w.key.Namespace)
	}
	return nil
}

// pausedFor says why a cluster's machines do not move when the upgrade webhook's pause is still
// on it, or "".
func (w waiter) pausedFor(ctx context.Context) string {
	cl := &clusterv1.Cluster{}
	if err := w.c.Get(ctx, w.key, cl); err != nil || !ptr.Deref(cl.Spec.Paused, false) {
		return ""
	}
	tkr, ok := cl.Annotations[tkg.AnnotationPaused]
	if !ok {
		return "the cluster is paused (spec.paused): unpause it for its machines to move"
	}
	return fmt.Sprintf("the cluster stays paused until its ClusterBootstrap follows release %s (annotation %s): "+
		"`kubectl get clusterbootstrap -n %s %s -o yaml` and the tanzu-addons-manager's log say what it waits for", tkr, tkg.AnnotationPaused, w.key.Namespace, w.key.Name)
}

// resolved waits until the cluster's ClusterBootstrap follows the new release.
func (w waiter) resolved(ctx context.Context, tkr string) error {
	var got string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, w.timeout, true, func(ctx context.Context) (bool, error) {
		cb := &runv1alpha3.ClusterBootstrap{}
		if err := w.c.Get(ctx, w.key, cb); err != nil {
			return false, nil
		}
		got = cb.Status.ResolvedTKR
		return got == tkr, nil
	})
	if err != nil {
		return fmt.Errorf("the cluster's ClusterBootstrap did not move to %s (it is at %q after %s)", tkr, got, w.timeout)
	}
	return nil
}
