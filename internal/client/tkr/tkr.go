// Package tkr is the flow behind `slipway kubernetes-release`: list releases, activate and
// deactivate them, list a cluster's available upgrades and a release's OS images.
package tkr

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/version"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/status"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Release is one release as the CLI shows it.
type Release struct {
	Name, Version string
	// Compatible is the Compatible condition's status, empty while it is not set.
	Compatible string
	Active     bool
}

func releaseOf(t *runv1alpha3.TanzuKubernetesRelease) Release {
	r := Release{Name: t.Name, Version: t.Spec.Version, Active: true}
	if c := t.Status.Conditions.Get(runv1alpha3.ConditionCompatible); c != nil {
		r.Compatible = string(c.Status)
	}
	if _, ok := t.Labels[runv1alpha3.LabelDeactivated]; ok {
		r.Active = false
	}
	return r
}

// Usable reports whether clusters may use the release: compatible and active.
func (r Release) Usable() bool { return r.Compatible == "True" && r.Active }

func notFound(name string) error {
	return fmt.Errorf("TanzuKubernetesRelease %q not found: `slipway kubernetes-release get -a` lists every release", name)
}

// List returns the releases, oldest first; name, when given, selects one.
func List(ctx context.Context, c client.Client, name string) ([]Release, error) {
	if name != "" {
		t := &runv1alpha3.TanzuKubernetesRelease{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, t); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, notFound(name)
			}
			return nil, err
		}
		return []Release{releaseOf(t)}, nil
	}
	list := &runv1alpha3.TanzuKubernetesReleaseList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("failed to list TanzuKubernetesReleases: %w", err)
	}
	out := make([]Release, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, releaseOf(&list.Items[i]))
	}
	sort.Slice(out, func(i, j int) bool { return tkg.CompareVersions(out[i].Version, out[j].Version) < 0 })
	return out, nil
}

// SetActive activates or deactivates releases: a deactivated release carries the label
// "deactivated", and the resolver skips it. Every name is checked before any is changed.
func SetActive(ctx context.Context, c client.Client, names []string, active bool) error {
	tkrs := make([]*runv1alpha3.TanzuKubernetesRelease, 0, len(names))
	for _, n := range names {
		t := &runv1alpha3.TanzuKubernetesRelease{}
		if err := c.Get(ctx, client.ObjectKey{Name: n}, t); err != nil {
			if apierrors.IsNotFound(err) {
				return notFound(n)
			}
			return err
		}
		tkrs = append(tkrs, t)
	}
	for _, t := range tkrs {
		patch := client.MergeFrom(t.DeepCopy())
		if active {
			delete(t.Labels, runv1alpha3.LabelDeactivated)
		} else {
			if t.Labels == nil {
				t.Labels = map[string]string{}
			}
			t.Labels[runv1alpha3.LabelDeactivated] = ""
		}
		if err := c.Patch(ctx, t, patch); err != nil {
			return fmt.Errorf("failed to update TanzuKubernetesRelease %s: %w", t.Name, err)
		}
	}
	return nil
}

// ReleaseUpgrades returns, oldest first, the compatible, active releases a cluster on release
// name may be upgraded to, by the TKR service's rule: newer, within its minor version and the
// next (TKG's `kubernetes-release available-upgrades get TKR_NAME`).
func ReleaseUpgrades(ctx context.Context, c client.Client, name string) ([]Release, error) {
	from := &runv1alpha3.TanzuKubernetesRelease{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, from); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notFound(name)
		}
		return nil, err
	}
	current, err := version.ParseSemantic(from.Spec.Version)
	if err != nil {
		return nil, fmt.Errorf("TanzuKubernetesRelease %s has an unreadable version %q: %w", name, from.Spec.Version, err)
	}
	all, err := List(ctx, c, "")
	if err != nil {
		return nil, err
	}
	var out []Release
	for _, r := range all {
		v, err := version.ParseSemantic(r.Version)
		if err != nil || !r.Usable() || v.Major() != current.Major() || v.Minor() > current.Minor()+1 || tkg.CompareVersions(r.Version, from.Spec.Version) <= 0 {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// Resolve returns the Ready, active release named name, or the newest whose name or version
// starts with it at a component's end (v1.35, v1.35.4---vmware.1; v1.3 is no prefix of v1.35),
// as `--tkr` takes it.
func Resolve(ctx context.Context, c client.Client, name string) (*runv1alpha3.TanzuKubernetesRelease, error) {
	list := &runv1alpha3.TanzuKubernetesReleaseList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("failed to list TanzuKubernetesReleases: %w", err)
	}
	var chosen *runv1alpha3.TanzuKubernetesRelease
	var usable []string
	for i := range list.Items {
		t := &list.Items[i]
		if _, off := t.Labels[runv1alpha3.LabelDeactivated]; off || !t.Status.Conditions.IsTrue(runv1alpha3.ConditionReady) {
			continue
		}
		usable = append(usable, t.Name)
		if t.Name == name {
			return t, nil
		}
		if !tkg.HasVersionPrefix(t.Name, name) && !tkg.HasVersionPrefix(t.Spec.Version, name) {
			continue
		}
		if chosen == nil || tkg.CompareVersions(t.Spec.Version, chosen.Spec.Version) > 0 {
			chosen = t
		}
	}
	if chosen == nil {
		sort.Strings(usable)
		return nil, fmt.Errorf("no Ready, active TanzuKubernetesRelease is named %q or starts with it: use one of %s (`slipway kubernetes-release get`)",
			name, strings.Join(usable, ", "))
	}
	return chosen, nil
}

// AvailableUpgrades returns the compatible, active releases a cluster's UpdatesAvailable
// condition lists.
func AvailableUpgrades(ctx context.Context, c client.Client, namespace, name string) ([]Release, error) {
	cluster := &clusterv1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("cluster %s/%s not found: give its namespace with -n", namespace, name)
		}
		return nil, err
	}
	if _, ok := cluster.Labels[runv1alpha3.LabelTKR]; !ok {
		return nil, fmt.Errorf("cluster %s/%s has no %s label: it was not resolved to a TanzuKubernetesRelease", namespace, name, runv1alpha3.LabelTKR)
	}
	cond := conditions.Get(cluster, runv1alpha3.ConditionUpdatesAvailable)
	if cond == nil {
		return nil, fmt.Errorf("cluster %s/%s has no %s condition yet: is the TKR status controller running?", namespace, name, runv1alpha3.ConditionUpdatesAvailable)
	}
	var out []Release
	for _, v := range status.ParseUpdates(cond.Message) {
		t := &runv1alpha3.TanzuKubernetesRelease{}
		if err := c.Get(ctx, client.ObjectKey{Name: tkg.VersionLabel(v)}, t); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		if r := releaseOf(t); r.Usable() {
			out = append(out, r)
		}
	}
	return out, nil
}

// OSImage is one OS image of a release.
type OSImage struct {
	Name, OSName, OSVersion, Arch, ImageType string
}

// OSImages returns the OS images of a release.
func OSImages(ctx context.Context, c client.Client, name string) ([]OSImage, error) {
	t := &runv1alpha3.TanzuKubernetesRelease{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, t); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notFound(name)
		}
		return nil, err
	}
	var out []OSImage
	for _, ref := range t.Spec.OSImages {
		o := &runv1alpha3.OSImage{}
		if err := c.Get(ctx, client.ObjectKey{Name: ref.Name}, o); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("OSImage %s of TanzuKubernetesRelease %s is missing: the release is invalid", ref.Name, name)
			}
			return nil, err
		}
		out = append(out, OSImage{Name: o.Name, OSName: o.Spec.OS.Name, OSVersion: o.Spec.OS.Version, Arch: o.Spec.OS.Arch, ImageType: o.Spec.Image.Type})
	}
	return out, nil
}
