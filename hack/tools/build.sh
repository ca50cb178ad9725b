#!/usr/bin/env bash
# Builds the upstream binaries slipway runs (kube-apiserver, kube-controller-manager,
# kube-scheduler for each supported Kubernetes version, and etcd with etcdctl) from the Go module
# proxy into bin/, skipping what is already built. Usage: hack/tools/build.sh [--only apiserver-etcd]
#
#   bin/k8s/<kubernetes version>/{kube-apiserver,kube-controller-manager,kube-scheduler,kubelet,kubeadm,kube-proxy}
#   bin/k8s/<default version>/kubectl
#   bin/etcd/<etcd version>/{etcd,etcdctl}
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tools="$root/hack/tools"
only=""
[ "${1:-}" = "--only" ] && only="${2:-}"

# The Kubernetes versions the local runtime supports; keep in sync with internal/assets.
k8s_versions=(v1.35.4 v1.34.3)
etcd_version=v3.6.5

module_dir() { # v1.35.4 -> k8s-v1.35
	local v=$1
	echo "$tools/k8s-${v%.*}"
}

build() { # module-dir output package [ldflags]
	local dir=$1 out=$2 pkg=$3 ldflags=${4:-}
	# A binary is built again when the flags it was built with changed (its version, say): Go's
	# build cache makes that a link, not a compile.
	if [ -x "$out" ] && [ "$(cat "$out.ldflags" 2>/dev/null)" = "$ldflags" ]; then
		touch "$out" # up to date for make, which runs this script when the script is newer
		return 0
	fi
	mkdir -p "$(dirname "$out")"
	echo "building $(basename "$out") $(basename "$(dirname "$out")") (cold builds take minutes)"
	local start=$SECONDS
	(cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$out.tmp" "$pkg")
	mv "$out.tmp" "$out"
	printf '%s' "$ldflags" >"$out.ldflags"
	echo "built $out in $((SECONDS - start))s"
}

version_ldflags() { # v1.35.4 -> -X flags that make the binary report TKG's version, v1.35.4+vmware.1
	local v=$1 minor
	minor=${v#v1.}
	minor=${minor%%.*}
	local flags=""
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=" -X $pkg.gitVersion=$v+vmware.1 -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
		flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
	done
	echo "$flags"
}

build "$tools/etcd" "$root/bin/etcd/$etcd_version/etcd" . \
	"-X go.etcd.io/etcd/api/v3/version.GitSHA=slipway"
# etcdctl, which the etcd image carries beside etcd as upstream's does.
if [ -z "$only" ]; then
	build "$tools/etcd" "$root/bin/etcd/$etcd_version/etcdctl" go.etcd.io/etcd/etcdctl/v3 \
		"-X go.etcd.io/etcd/api/v3/version.GitSHA=slipway"
fi

for v in "${k8s_versions[@]}"; do
	if [ "$only" = apiserver-etcd ] && [ "$v" != "${k8s_versions[0]}" ]; then
		continue
	fi
	for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet kubeadm kube-proxy; do
		if [ "$only" = apiserver-etcd ] && [ "$cmd" != kube-apiserver ]; then
			continue
		fi
		build "$(module_dir "$v")" "$root/bin/k8s/$v/$cmd" "k8s.io/kubernetes/cmd/$cmd" "$(version_ldflags "$v")"
	done
done

# kubectl of the default version, the client the e2e tests drive clusters with as a user does.
if [ -z "$only" ]; then
	v=${k8s_versions[0]}
	build "$(module_dir "$v")" "$root/bin/k8s/$v/kubectl" "k8s.io/kubernetes/cmd/kubectl" "$(version_ldflags "$v")"
fi
