#!/usr/bin/env bash
# Measures issue 18's goals on this host over RUNS runs (assets built), on slipway's vCenter
# simulator: each run times `slipway management-cluster create -f` of a vSphere management
# cluster (dev, 1 control plane + 1 worker VM, v1.35.4) from the command to "Management cluster
# created!", the bootstrap cluster deleted (goal <= 180 s), then `slipway cluster create -f` of a
# workload cluster on it (dev, seeds/001's variables) to "Workload cluster … created" with antrea,
# vsphere-cpi and vsphere-csi reconciled (goal <= 60 s), then deletes both. Prints each run and
# the medians.
# The simulator's VMs boot as nodes of this host (root): the simulator serves on the bridge's host
# address, and the nodes pull from the local registry of slipway's own home, which `make images`
# fills, so the bench runs there.
# Usage: hack/bench/vsphere.sh [RUNS=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/hack/bench/lib.sh"
runs=${1:-3}
slipway=$root/bin/slipway

[ -x "$root/bin/etcd/v3.6.5/etcd" ] || make -C "$root" assets
make -C "$root" build providers packages >/dev/null

work=$(mktemp -d)
export KUBECONFIG=$work/kubeconfig
make -C "$root" images >/dev/null
address=198.18.0.1:8989 mgmt_endpoint=198.18.255.1 wc_endpoint=198.18.255.2
# The simulator's clusters go with it; in slipway's own home, nothing else does.
cleanup() {
	"$slipway" management-cluster delete tkg-mgmt-vc -y >/dev/null 2>&1 || true
	"$slipway" vsphere simulator stop >/dev/null 2>&1 || true
}
trap 'cleanup; rm -rf "$work"' EXIT

# A simulator of the user's would be stopped at the end: the bench starts its own or none.
if "$slipway" vsphere simulator status | grep -q serving; then
	echo "a vCenter simulator runs already: stop it first (slipway vsphere simulator stop)" >&2
	trap - EXIT
	rm -rf "$work"
	exit 1
fi
"$slipway" vsphere simulator start --address "$address" >/dev/null
vars=$("$slipway" vsphere simulator status | grep '^VSPHERE_' | grep -v CONTROL_PLANE_ENDPOINT)
key='VSPHERE_SSH_AUTHORIZED_KEY: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfcGigZ63XnMoqRl2PKwyhzQ6ChfGxQJhqvD/5SujkZ bench@example'
# file NAME ENDPOINT: a dev configuration of a cluster on the simulator.
file() {
	printf 'CLUSTER_NAME: %s\nCLUSTER_PLAN: dev\nINFRASTRUCTURE_PROVIDER: vsphere\nCNI: antrea\nOS_NAME: ubuntu\nOS_VERSION: "20.04"\nVSPHERE_CONTROL_PLANE_ENDPOINT: %s\n%s\n%s\n' \
		"$1" "$2" "$key" "$vars" >"$work/$1.yaml"
	echo "$work/$1.yaml"
}
"$slipway" vsphere ova build --kubernetes-release v1.35.4+vmware.1-tkg.1 -o "$work/node.ova" >/dev/null
"$slipway" vsphere ova import "$work/node.ova" -f "$(file tkg-mgmt-vc "$mgmt_endpoint")" >/dev/null

mcs=() wcs=()
for i in $(seq 1 "$runs"); do
	timed mcs "$slipway" management-cluster create -f "$(file tkg-mgmt-vc "$mgmt_endpoint")" -y -t 10m
	timed wcs "$slipway" cluster create -f "$(file tkg-vc-antrea "$wc_endpoint")" -t 5m
	"$slipway" cluster delete tkg-vc-antrea -y -t 3m >/dev/null
	"$slipway" management-cluster delete tkg-mgmt-vc -y -t 10m >/dev/null
	echo "run $i: management-cluster create ${mcs[-1]}s, cluster create ${wcs[-1]}s"
done

echo "median management-cluster create on vSphere: $(median "${mcs[@]}")s over $runs runs (goal <= 180s)"
echo "median cluster create on vSphere:            $(median "${wcs[@]}")s (goal <= 60s)"
