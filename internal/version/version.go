// Package version reports which slipway this is, as set by the build.
package version

import (
	"cmp"
	"runtime/debug"
)

// version is set by the Makefile with -ldflags "-X ...version.version=<git describe>".
var version = ""

// Get returns slipway's version: the one the build set, else the module version, else "dev".
func Get() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

// buildDate and sha are set by the Makefile: the date of the commit built and its short SHA,
// with "-dirty" when the tree had changes.
var buildDate, sha = "", ""

// Build is what the tanzu CLI's `version` prints beside the version, its buildDate and sha: the
// date of the commit built (slipway's builds are reproducible, so the commit's date, not the
// clock's) and its short SHA. Each is "unknown" when the build did not set it.
func Build() (date, commit string) {
	return cmp.Or(buildDate, "unknown"), cmp.Or(sha, "unknown")
}
