package tkg

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// Labels TKG puts on OSImages, from their spec, for selectors to match.
const (
	LabelOSType    = "os-type"
	LabelOSName    = "os-name"
	LabelOSVersion = "os-version"
	LabelOSArch    = "os-arch"
	LabelImageType = "image-type"
)

// LabelTKRPackage marks the Packages of a TKR package repository that carry a release (the
// repository's build writes it); the TKR source installs what it marks.
const LabelTKRPackage = "run.tanzu.vmware.com/tkr-package"

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

// ReleaseOf says whether a release's version (v1.35.4+vmware.1-tkg.1) is one of the Kubernetes
// version asked for (KUBERNETES_VERSION: v1.35.4, v1.35.4+vmware.1 or the release's own).
func ReleaseOf(release, asked string) bool {
	return release == asked || strings.HasPrefix(release, asked+"+") || strings.HasPrefix(release, asked+"-")
}

// CompareVersions orders release versions as TKG does: by semantic version, then by build
// metadata (v1.35.4+vmware.2-tkg.1 is newer than v1.35.4+vmware.1-tkg.1), its numeric
// components compared as numbers. It returns -1, 0 or 1; unparsable versions sort first.
func CompareVersions(a, b string) int {
	va, errA := version.ParseSemantic(a)
	vb, errB := version.ParseSemantic(b)
	switch {
	case errA != nil && errB != nil:
		return strings.Compare(a, b)
	case errA != nil:
		return -1
	case errB != nil:
		return 1
	}
	if va.LessThan(vb) {
		return -1
	}
	if vb.LessThan(va) {
		return 1
	}
	return compareBuild(buildOf(a), buildOf(b))
}

func buildOf(v string) string {
	if i := strings.IndexByte(v, '+'); i >= 0 {
		return v[i+1:]
	}
	return ""
}

func compareBuild(a, b string) int {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '-' })
	}
	pa, pb := split(a), split(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, errA := strconv.Atoi(pa[i])
		nb, errB := strconv.Atoi(pb[i])
		if errA == nil && errB == nil {
			if na != nb {
				if na < nb {
					return -1
				}
				return 1
			}
			continue
		}
		if c := strings.Compare(pa[i], pb[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(pa) < len(pb):
		return -1
	case len(pa) > len(pb):
		return 1
	}
	return 0
}
