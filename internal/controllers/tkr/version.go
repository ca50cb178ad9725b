package tkr

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

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
