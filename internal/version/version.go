// Package version reports which slipway this is, as set by the build.
package version

import "runtime/debug"

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
