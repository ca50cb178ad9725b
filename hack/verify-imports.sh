#!/usr/bin/env bash
# Checks DESIGN's import rules ("Layout"): imports run from the CLI side down to the controllers,
# the runtimes and the libraries, never up. Each rule names packages and what none of them may
# import, directly or through another package (go list's Deps: tests left out). Prints every
# broken rule with the chain's two ends and exits 1 if any is broken.
# Usage: hack/verify-imports.sh (from the repository's root)
set -euo pipefail

module=$(go list -m)
broken=0

# forbid PACKAGES REGEX WHY: no package matching the go list pattern PACKAGES may depend on a
# package of slipway's whose path (after the module) matches the extended regular expression REGEX.
forbid() {
	local packages=$1 regex=$2 why=$3 found
	# shellcheck disable=SC2086 # PACKAGES is a list of patterns
	found=$(go list -f '{{.ImportPath}} {{join .Deps " "}}' $packages | while read -r pkg deps; do
		for d in $deps; do
			case $d in "$module"/*) ;; *) continue ;; esac
			if [[ ${d#"$module"/} =~ ^($regex)(/|$) ]]; then
				echo "  ${pkg#"$module"/} -> ${d#"$module"/}"
			fi
		done
	done)
	if [ -n "$found" ]; then
		echo "import rule broken: $why"
		echo "$found"
		broken=1
	fi
}

forbid ./internal/controllers/... 'internal/(cli|client)' \
	'controllers do not import the CLI side (internal/cli, internal/client)'
forbid ./internal/local/... 'internal/(cli|client|controllers)' \
	'the local runtime (node, store, load balancer, provider) imports no controllers and nothing of the CLI side'
forbid ./internal/vsphere/... 'internal/(cli|client|controllers)' \
	'the vSphere side (simulator, prerequisites, OVA import) imports no controllers and nothing of the CLI side'
forbid ./internal/config/... 'internal/(cli|client|controllers)' \
	"TKG's configuration (internal/config) imports no controllers and nothing of the CLI side"
forbid ./internal/carvel/... 'internal/(cli|client|controllers)' \
	'the Carvel library (internal/carvel) imports no controllers and nothing of the CLI side'
forbid './internal/vsphere/prerequisites ./internal/vsphere/vcenter' 'internal/vsphere/simulator' \
	'validating a vCenter does not build the simulator'
forbid ./internal/tkg/... '.+' \
	"internal/tkg, TKG's shared vocabulary (labels, annotations, names, the release order), is a leaf"
forbid ./internal/pki/... '.+' \
	'internal/pki imports nothing of slipway'"'"'s'
forbid ./api/... 'internal|cmd|test|config|hack' \
	'api/ imports nothing of slipway'"'"'s but its own types'

exit $broken
