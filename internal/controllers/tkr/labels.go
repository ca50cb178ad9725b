package tkr

import (
	"strings"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
)

// Labels TKG puts on OSImages, from their spec, for selectors to match.
const (
	LabelOSType    = "os-type"
	LabelOSName    = "os-name"
	LabelOSVersion = "os-version"
	LabelOSArch    = "os-arch"
	LabelImageType = "image-type"
)

// VersionLabel turns a version into a label key: "+" is not allowed in labels, so
// v1.35.4+vmware.1-tkg.1 becomes v1.35.4---vmware.1-tkg.1, as in TKG.
func VersionLabel(version string) string {
	return strings.ReplaceAll(version, "+", "---")
}

// VersionFromLabel undoes VersionLabel: v1.35.4---vmware.1-tkg.1 gives v1.35.4+vmware.1-tkg.1.
func VersionFromLabel(label string) string {
	return strings.ReplaceAll(label, "---", "+")
}

// HasVersionPrefix says whether s (a version, v1.35.4+vmware.1-tkg.1, or a release's name)
// begins with prefix at a component's end, as a --tkr prefix selects it: v1.35 and
// v1.35.4---vmware.1 are prefixes of v1.35.4---vmware.1-tkg.1; v1.3 is none of v1.35.
func HasVersionPrefix(s, prefix string) bool {
	if !strings.HasPrefix(s, prefix) {
		return false
	}
	return len(s) == len(prefix) || strings.ContainsRune(".+-", rune(s[len(prefix)]))
}

// VersionPrefixes returns every prefix of a version label that ends at a component boundary:
// v1.35.4---vmware.1-tkg.1 gives v1, v1.35, v1.35.4, v1.35.4---vmware, v1.35.4---vmware.1,
// v1.35.4---vmware.1-tkg and v1.35.4---vmware.1-tkg.1. A TKR carries each as a label, so that a
// version prefix selects it.
func VersionPrefixes(label string) []string {
	var prefixes []string
	for i := 1; i < len(label); i++ {
		if label[i] == '.' || label[i] == '-' {
			if p := label[:i]; !strings.HasSuffix(p, "-") {
				prefixes = append(prefixes, p)
			}
		}
	}
	return append(prefixes, label)
}

// TKRLabels returns a release's labels with its version prefixes added, and the incompatible and
// invalid labels set from its conditions (and removed when they no longer say so).
func TKRLabels(tkr *runv1alpha3.TanzuKubernetesRelease) map[string]string {
	out := map[string]string{}
	for k, v := range tkr.Labels {
		out[k] = v
	}
	for _, p := range VersionPrefixes(VersionLabel(tkr.Spec.Version)) {
		out[p] = ""
	}
	delete(out, runv1alpha3.LabelIncompatible)
	delete(out, runv1alpha3.LabelInvalid)
	for _, c := range tkr.Status.Conditions {
		if c.Status != "False" {
			continue
		}
		switch c.Type {
		case runv1alpha3.ConditionCompatible:
			out[runv1alpha3.LabelIncompatible] = ""
		case runv1alpha3.ConditionValid:
			out[runv1alpha3.LabelInvalid] = ""
		}
	}
	return out
}

// OSImageLabels returns an OSImage's labels with its Kubernetes version prefixes and its OS and
// image fields added.
func OSImageLabels(o *runv1alpha3.OSImage) map[string]string {
	out := map[string]string{}
	for k, v := range o.Labels {
		out[k] = v
	}
	for _, p := range VersionPrefixes(VersionLabel(o.Spec.KubernetesVersion)) {
		out[p] = ""
	}
	out[LabelOSType] = o.Spec.OS.Type
	out[LabelOSName] = o.Spec.OS.Name
	out[LabelOSVersion] = o.Spec.OS.Version
	out[LabelOSArch] = o.Spec.OS.Arch
	out[LabelImageType] = o.Spec.Image.Type
	for k, v := range o.Spec.Image.Ref {
		if s, ok := v.(string); ok {
			out[o.Spec.Image.Type+"-"+k] = s
		}
	}
	return out
}
