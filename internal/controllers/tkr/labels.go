package tkr

import (
	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// TKRLabels returns a release's labels with its version prefixes added, and the incompatible and
// invalid labels set from its conditions (and removed when they no longer say so).
func TKRLabels(tkr *runv1alpha3.TanzuKubernetesRelease) map[string]string {
	out := map[string]string{}
	for k, v := range tkr.Labels {
		out[k] = v
	}
	for _, p := range tkg.VersionPrefixes(tkg.VersionLabel(tkr.Spec.Version)) {
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
	for _, p := range tkg.VersionPrefixes(tkg.VersionLabel(o.Spec.KubernetesVersion)) {
		out[p] = ""
	}
	out[tkg.LabelOSType] = o.Spec.OS.Type
	out[tkg.LabelOSName] = o.Spec.OS.Name
	out[tkg.LabelOSVersion] = o.Spec.OS.Version
	out[tkg.LabelOSArch] = o.Spec.OS.Arch
	out[tkg.LabelImageType] = o.Spec.Image.Type
	for k, v := range o.Spec.Image.Ref {
		if s, ok := v.(string); ok {
			out[o.Spec.Image.Type+"-"+k] = s
		}
	}
	return out
}
