package resolver

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/version"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/tkr"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// OSImageQuery is what one part of a cluster (its control plane or a machine deployment) asks for.
type OSImageQuery struct {
	// K8sVersionPrefix is a version prefix such as v1.35 or v1.35.4+vmware.1; empty matches all.
	K8sVersionPrefix string
	// TKRSelector selects releases by label; nil selects all.
	TKRSelector labels.Selector
	// OSImageSelector selects OSImages by label (os-name, os-version, os-arch, image-type, …);
	// nil selects all.
	OSImageSelector labels.Selector
}

func (q OSImageQuery) String() string {
	sel := func(s labels.Selector) string {
		if s == nil || s.Empty() {
			return "any"
		}
		return s.String()
	}
	prefix := q.K8sVersionPrefix
	if prefix == "" {
		prefix = "any"
	}
	return fmt.Sprintf("{version %s, TKR selector %s, OSImage selector %s}", prefix, sel(q.TKRSelector), sel(q.OSImageSelector))
}

// Query is what a cluster asks for: its control plane and its machine deployments, which must
// share one release.
type Query struct {
	ControlPlane       *OSImageQuery
	MachineDeployments []*OSImageQuery
}

// Result is the release a cluster resolved to, and the OSImages of each part.
type Result struct {
	TKR *runv1alpha3.TanzuKubernetesRelease
	// ControlPlane and MachineDeployments hold the matching OSImages of the chosen release, best
	// first, in the order of the query.
	ControlPlane       []*runv1alpha3.OSImage
	MachineDeployments [][]*runv1alpha3.OSImage
}

// Error says why nothing resolved: what was asked, and each release with why it was rejected.
type Error struct {
	Query    Query
	Rejected map[string][]string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("could not resolve a TKR for")
	if e.Query.ControlPlane != nil {
		fmt.Fprintf(&b, " the control plane %s", e.Query.ControlPlane)
	}
	for i, md := range e.Query.MachineDeployments {
		if md != nil {
			fmt.Fprintf(&b, ", machine deployment %d %s", i, md)
		}
	}
	if len(e.Rejected) == 0 {
		b.WriteString(": no TanzuKubernetesRelease exists: add the TKR package repository or wait for the TKR source to install it")
		return b.String()
	}
	b.WriteString(": ")
	names := make([]string, 0, len(e.Rejected))
	for n := range e.Rejected {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", n, strings.Join(e.Rejected[n], ", "))
	}
	return b.String()
}

// Resolve picks the newest release satisfying every part of the query.
func Resolve(tkrs []*runv1alpha3.TanzuKubernetesRelease, osImages []*runv1alpha3.OSImage, q Query) (*Result, error) {
	results, rejected := Candidates(tkrs, osImages, q)
	if len(results) == 0 {
		return nil, &Error{Query: q, Rejected: rejected}
	}
	return results[0], nil
}

// Candidates returns every release satisfying every part of the query, newest first, and why
// each other release was rejected.
func Candidates(tkrs []*runv1alpha3.TanzuKubernetesRelease, osImages []*runv1alpha3.OSImage, q Query) ([]*Result, map[string][]string) {
	byName := map[string]*runv1alpha3.OSImage{}
	for _, o := range osImages {
		byName[o.Name] = o
	}
	parts := append([]*OSImageQuery{q.ControlPlane}, q.MachineDeployments...)
	rejected := map[string][]string{}
	var results []*Result
	for _, t := range tkrs {
		res := &Result{TKR: t, MachineDeployments: make([][]*runv1alpha3.OSImage, len(q.MachineDeployments))}
		reasons := unwanted(t)
		for i, part := range parts {
			if part == nil || len(reasons) > 0 {
				continue
			}
			images, why := matchPart(t, byName, *part)
			if why != "" {
				reasons = append(reasons, partName(i)+": "+why)
				continue
			}
			if i == 0 {
				res.ControlPlane = images
			} else {
				res.MachineDeployments[i-1] = images
			}
		}
		if len(reasons) > 0 {
			rejected[t.Name] = reasons
			continue
		}
		if _, err := version.ParseSemantic(t.Spec.Version); err != nil {
			rejected[t.Name] = []string{fmt.Sprintf("invalid version %q", t.Spec.Version)}
			continue
		}
		results = append(results, res)
	}
	sort.SliceStable(results, func(i, j int) bool {
		return tkg.CompareVersions(results[i].TKR.Spec.Version, results[j].TKR.Spec.Version) > 0
	})
	return results, rejected
}

func partName(i int) string {
	if i == 0 {
		return "control plane"
	}
	return fmt.Sprintf("machine deployment %d", i-1)
}

// unwanted says why a release may not be used at all.
func unwanted(t *runv1alpha3.TanzuKubernetesRelease) []string {
	ls := tkr.TKRLabels(t)
	var reasons []string
	for _, l := range []string{runv1alpha3.LabelIncompatible, runv1alpha3.LabelDeactivated, runv1alpha3.LabelInvalid} {
		if _, ok := ls[l]; ok {
			reasons = append(reasons, l)
		}
	}
	return reasons
}

// matchPart checks a release against one part's query and returns its matching OSImages, or why
// it does not match.
func matchPart(t *runv1alpha3.TanzuKubernetesRelease, osImages map[string]*runv1alpha3.OSImage, q OSImageQuery) ([]*runv1alpha3.OSImage, string) {
	ls := labels.Set(tkr.TKRLabels(t))
	if q.K8sVersionPrefix != "" && !ls.Has(tkg.VersionLabel(q.K8sVersionPrefix)) && t.Name != q.K8sVersionPrefix {
		return nil, fmt.Sprintf("version %s does not match %s", t.Spec.Version, q.K8sVersionPrefix)
	}
	if q.TKRSelector != nil && !q.TKRSelector.Matches(ls) {
		return nil, fmt.Sprintf("labels do not match TKR selector %s", q.TKRSelector)
	}
	var images []*runv1alpha3.OSImage
	var missing []string
	for _, ref := range t.Spec.OSImages {
		o, ok := osImages[ref.Name]
		if !ok {
			missing = append(missing, ref.Name)
			continue
		}
		if q.OSImageSelector == nil || q.OSImageSelector.Matches(labels.Set(tkr.OSImageLabels(o))) {
			images = append(images, o)
		}
	}
	if len(images) == 0 {
		why := "no OSImage"
		if q.OSImageSelector != nil && !q.OSImageSelector.Empty() {
			why += " matching " + q.OSImageSelector.String()
		}
		if len(missing) > 0 {
			why += fmt.Sprintf(" (OSImages %s not found)", strings.Join(missing, ", "))
		}
		return nil, why
	}
	sort.Slice(images, func(i, j int) bool { return images[i].Name < images[j].Name })
	return images, ""
}
