#!/usr/bin/env bash
# Checks that go.mod holds the pinned stack: the versions known to resolve and compile together
# from the filtered module proxy (docs/development.md, "The pinned stack"). A pinned module the
# build does not use may be absent; one that is required must be at its pinned version. go.mod
# must have no replace line, so that `go install` of the product module works.
# Usage: hack/verify-stack.sh (from the repository's root)
set -euo pipefail

# Cluster API stays on 1.13 because the newest vSphere provider the module proxy serves (v1.16.1)
# requires it; cloud.google.com/go v0.116.0 because imgpkg's older one makes an ambiguous import.
pinned='
sigs.k8s.io/cluster-api v1.13.4
sigs.k8s.io/cluster-api-provider-vsphere v1.16.1
github.com/vmware/govmomi v0.53.0
sigs.k8s.io/controller-runtime v0.23.3
k8s.io/api v0.35.4
k8s.io/apimachinery v0.35.4
k8s.io/client-go v0.35.4
k8s.io/apiextensions-apiserver v0.35.4
carvel.dev/ytt v0.52.0
carvel.dev/imgpkg v0.44.0
github.com/google/go-containerregistry v0.20.3
github.com/vmware-tanzu/carvel-kapp-controller v0.50.0
cloud.google.com/go v0.116.0
'
required='
sigs.k8s.io/cluster-api
sigs.k8s.io/cluster-api-provider-vsphere
github.com/vmware/govmomi
sigs.k8s.io/controller-runtime
k8s.io/client-go
carvel.dev/ytt
github.com/google/go-containerregistry
github.com/vmware-tanzu/carvel-kapp-controller
'

broken=0
# The require lines of go.mod, as "path version"; with module graph pruning they list the selected
# version of every module the build uses.
requires=$(go mod edit -print | awk '
	/^require \($/ { block = 1; next }
	block && /^\)/ { block = 0; next }
	block { print $1, $2; next }
	/^require / { print $2, $3 }')

while read -r module want; do
	[ -n "$module" ] || continue
	got=$(awk -v m="$module" '$1 == m { print $2 }' <<<"$requires")
	if [ -z "$got" ]; then
		if grep -qxF "$module" <<<"$required"; then
			echo "go.mod does not require $module: slipway is built on it at $want"
			broken=1
		fi
	elif [ "$got" != "$want" ]; then
		echo "go.mod has $module at $got, want $want: keep the pinned stack (docs/development.md), or check that the replacement resolves with the rest and change the pin"
		broken=1
	fi
done <<<"$pinned"

# Read once: grep -q on a pipe may close it early, and pipefail would take go's SIGPIPE for "no".
mod=$(go mod edit -print)
if grep -q '^replace' <<<"$mod"; then
	echo "go.mod has replace lines: the product module must not use replace, so that go install works:"
	sed -n '/^replace/,$p' <<<"$mod"
	broken=1
fi

exit $broken
