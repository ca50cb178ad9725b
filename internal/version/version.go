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
// clock's) and its short SHA: as the Makefile set them, else from Go's VCS stamp, else
// "unknown".
func Build() (date, commit string) {
	date, commit = buildDate, sha
	if info, ok := debug.ReadBuildInfo(); ok && (date == "" || commit == "") {
		var revision, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.time":
				date = cmp.Or(date, s.Value[:min(len(s.Value), len("2006-01-02"))])
			case "vcs.revision":
				revision = s.Value[:min(len(s.Value), 9)]
			case "vcs.modified":
				modified = s.Value
			}
		}
		if commit == "" && revision != "" {
			commit = revision
			if modified == "true" {
				commit += "-dirty"
			}
		}
	}
	return cmp.Or(date, "unknown"), cmp.Or(commit, "unknown")
}
