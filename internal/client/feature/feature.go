// Package feature is the flow behind `slipway feature`: list the Features of the cluster with the
// FeatureGate that gates each, and activate or deactivate one through its FeatureGate, under the
// stability policies the featuregates webhook enforces.
package feature

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1alpha2 "github.com/slipway-dev/slipway/api/core/v1alpha2"
)

// DefaultGate is the FeatureGate TKG's features are gated by.
const DefaultGate = "tkg-system"

// Info is one Feature as `feature list` shows it.
type Info struct {
	Name, Description string
	Stability         corev1alpha2.StabilityLevel
	Activated         bool
	Immutable         bool
	// Gate is the FeatureGate that references it, "--" for none.
	Gate string
	// listed says whether the list shows it by default: discoverable, and not experimental.
	discoverable bool
}

// ListOptions select what List returns.
type ListOptions struct {
	// Gate keeps the Features of one FeatureGate; empty keeps all.
	Gate string
	// Activated and Deactivated keep those only; neither keeps both.
	Activated, Deactivated bool
	// Experimental lists Experimental Features too.
	Experimental bool
}

// List returns the Features of the cluster, by name, with the FeatureGate of each, as TKG's
// feature plugin lists them: only discoverable ones, Experimental ones when asked.
func List(ctx context.Context, c client.Client, o ListOptions) ([]Info, error) {
	features := &corev1alpha2.FeatureList{}
	if err := c.List(ctx, features); err != nil {
		return nil, fmt.Errorf("failed to list Features: %w", err)
	}
	gates := &corev1alpha2.FeatureGateList{}
	if err := c.List(ctx, gates); err != nil {
		return nil, fmt.Errorf("failed to list FeatureGates: %w", err)
	}
	infos := map[string]*Info{}
	for _, f := range features.Items {
		p := corev1alpha2.Policies[f.Spec.Stability]
		infos[f.Name] = &Info{Name: f.Name, Description: f.Spec.Description, Stability: f.Spec.Stability, Activated: f.Status.Activated,
			Immutable: p.Immutable, Gate: "--", discoverable: p.Discoverable}
	}
	for _, g := range gates.Items {
		for _, ref := range g.Spec.Features {
			if info, ok := infos[ref.Name]; ok {
				info.Gate = g.Name
				continue
			}
			// A reference to a Feature not on the cluster yet: shown, its policy unknown.
			infos[ref.Name] = &Info{Name: ref.Name, Gate: g.Name, discoverable: true}
		}
	}
	var out []Info
	for _, i := range infos {
		if o.shows(i) {
			out = append(out, *i)
		}
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// shows says whether the list shows a Feature: discoverable, Experimental only when asked, of
// the gate asked for, and in an activation state asked for (both when neither is).
func (o ListOptions) shows(i *Info) bool {
	if !i.discoverable || i.Stability == corev1alpha2.Experimental && !o.Experimental || o.Gate != "" && i.Gate != o.Gate {
		return false
	}
	if !o.Activated && !o.Deactivated {
		return true
	}
	return i.Activated && o.Activated || !i.Activated && o.Deactivated
}

// SetOptions are what SetActivation takes.
type SetOptions struct {
	Name, Gate string
	Activate   bool
	// VoidWarranty accepts that toggling a Feature whose stability voids the warranty
	// (Experimental, Work In Progress) voids every support guarantee of the environment.
	VoidWarranty bool
}

// SetActivation activates or deactivates a Feature through the FeatureGate: its reference there
// is set, or added. A Feature of an immutable stability level is refused, and one whose toggling
// voids the warranty without VoidWarranty.
func SetActivation(ctx context.Context, c client.Client, o SetOptions) error {
	f := &corev1alpha2.Feature{}
	if err := c.Get(ctx, client.ObjectKey{Name: o.Name}, f); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("there is no Feature %s on the cluster: `slipway feature list -x` lists them", o.Name)
		}
		return err
	}
	p := corev1alpha2.Policies[f.Spec.Stability]
	if p.Immutable {
		return fmt.Errorf("feature %s is %s, which cannot be toggled: it stays activated", o.Name, f.Spec.Stability)
	}
	if p.VoidsWarranty && o.Activate != p.DefaultActivation && !o.VoidWarranty {
		return fmt.Errorf("feature %s is %s: toggling it permanently voids all support guarantees of this environment; add --permanentlyVoidAllSupportGuarantees to accept that",
			o.Name, f.Spec.Stability)
	}
	g := &corev1alpha2.FeatureGate{}
	if err := c.Get(ctx, client.ObjectKey{Name: o.Gate}, g); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("there is no FeatureGate %s on the cluster: name the one that gates %s with --featuregate", o.Gate, o.Name)
		}
		return err
	}
	before := g.DeepCopy()
	i := slices.IndexFunc(g.Spec.Features, func(r corev1alpha2.FeatureReference) bool { return r.Name == o.Name })
	if i < 0 {
		g.Spec.Features = append(g.Spec.Features, corev1alpha2.FeatureReference{Name: o.Name})
		i = len(g.Spec.Features) - 1
	}
	g.Spec.Features[i].Activate = o.Activate
	g.Spec.Features[i].PermanentlyVoidAllSupportGuarantees = g.Spec.Features[i].PermanentlyVoidAllSupportGuarantees || o.VoidWarranty
	if err := c.Patch(ctx, g, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("failed to update FeatureGate %s: %w", o.Gate, err)
	}
	return nil
}
