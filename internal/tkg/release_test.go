package tkg

import "testing"

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"v1.35.4+vmware.1-tkg.1", "v1.35.4+vmware.2-tkg.1", -1},
		{"v1.35.4+vmware.10-tkg.1", "v1.35.4+vmware.9-tkg.1", 1},
		{"v1.35.4+vmware.1-tkg.2", "v1.35.4+vmware.1-tkg.1", 1},
		{"v1.34.3+vmware.9-tkg.9", "v1.35.4+vmware.1-tkg.1", -1},
		{"v1.35.4+vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1", 0},
		{"v1.35.0-rc.1+vmware.1", "v1.35.0+vmware.1", -1},
		{"garbage", "v1.0.0", -1},
	} {
		if got := CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestVersionPrefixes(t *testing.T) {
	got := VersionPrefixes(VersionLabel("v1.35.4+vmware.1-tkg.1"))
	want := []string{"v1", "v1.35", "v1.35.4", "v1.35.4---vmware", "v1.35.4---vmware.1", "v1.35.4---vmware.1-tkg", "v1.35.4---vmware.1-tkg.1"}
	if len(got) != len(want) {
		t.Fatalf("prefixes %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("prefixes %v, want %v", got, want)
		}
	}
}

// TestHasVersionPrefix: a --tkr prefix ends at a component, so v1.3 selects no v1.35 release.
func TestHasVersionPrefix(t *testing.T) {
	for _, tc := range []struct {
		s, prefix string
		want      bool
	}{
		{"v1.35.4+vmware.1-tkg.1", "v1.35", true},
		{"v1.35.4+vmware.1-tkg.1", "v1.35.4+vmware.1", true},
		{"v1.35.4---vmware.1-tkg.1", "v1.35.4---vmware.1", true},
		{"v1.35.4+vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1", true},
		{"v1.35.4+vmware.1-tkg.1", "v1.3", false},
		{"v1.35.4+vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.10", false},
		{"v1.35.4+vmware.1-tkg.1", "v1.36", false},
	} {
		if got := HasVersionPrefix(tc.s, tc.prefix); got != tc.want {
			t.Errorf("HasVersionPrefix(%s, %s) = %t, want %t", tc.s, tc.prefix, got, tc.want)
		}
	}
}

// TestReleaseOf matches a release to the Kubernetes version asked for, never by a shorter
// version's prefix.
func TestReleaseOf(t *testing.T) {
	for _, tc := range []struct {
		release, asked string
		want           bool
	}{
		{"v1.35.4+vmware.1-tkg.1", "v1.35.4", true},
		{"v1.35.4+vmware.1-tkg.1", "v1.35.4+vmware.1", true},
		{"v1.35.4+vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1", true},
		{"v1.35.4+vmware.1-tkg.1", "v1.35", false},
		{"v1.35.40+vmware.1-tkg.1", "v1.35.4", false},
		{"v1.34.3+vmware.1-tkg.1", "v1.35.4", false},
	} {
		if got := ReleaseOf(tc.release, tc.asked); got != tc.want {
			t.Errorf("ReleaseOf(%s, %s) = %t, want %t", tc.release, tc.asked, got, tc.want)
		}
	}
}
