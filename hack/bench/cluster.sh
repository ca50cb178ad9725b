#!/usr/bin/env bash
# Measures issue 17's goals on this host over RUNS runs (assets built): on one management
# cluster (created once, local, dev), each run times `slipway cluster create` of a workload
# cluster from a flat file (dev, 1 control plane + 1 worker, v1.34.3) to "Workload cluster …
# created" with every core package reconciled (goal <= 45 s), `cluster scale` by one worker to
# the new node Ready (goal <= 15 s), `cluster upgrade --tkr v1.35` to every machine and add-on
# on the new release (goal <= 120 s) and `cluster delete` until the cluster is gone (goal
# <= 30 s). Prints each run, the moments of each create's waits and packages, and the medians. The
# nodes (root) pull from the local registry of slipway's own home, which `make images` fills, so
# the bench runs there.
# Usage: hack/bench/cluster.sh [RUNS=3]
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
# In slipway's own home, only what the bench made goes.
trap '"$slipway" management-cluster delete bench -y >/dev/null 2>&1; rm -rf "$work"' EXIT

"$slipway" management-cluster create --name bench >"$work/mc.log" 2>&1 || { cat "$work/mc.log"; exit 1; }

# scale NAME N: scales the workload cluster to N workers and waits until it lists N of N.
scale() {
	"$slipway" cluster scale "$1" -w "$2"
	for _ in $(seq 1 600); do
		"$slipway" cluster list -o json | grep -q "\"workers\": *\"$2/$2\"" && return 0
		sleep 0.2
	done
	return 1
}

creates=() scales=() upgrades=() deletes=()
for i in $(seq 1 "$runs"); do
	name=bench-wc-$i
	printf 'CLUSTER_NAME: %s\nCLUSTER_PLAN: dev\nWORKER_MACHINE_COUNT: 1\nKUBERNETES_VERSION: v1.34.3\n' "$name" >"$work/$name.yaml"
	timed creates "$slipway" cluster create -f "$work/$name.yaml" -t 5m
	# Where the create's time went: the seconds at which it began each of TKG's waits and saw
	# each core package reconciled.
	grep -E 'waiting for|successfully reconciled|created' "$work/step.log" | sed 's/^/    /'
	timed scales scale "$name" 2
	timed upgrades "$slipway" cluster upgrade "$name" --tkr v1.35 -y -t 8m
	timed deletes "$slipway" cluster delete "$name" -y -t 3m
	echo "run $i: create ${creates[-1]}s, scale ${scales[-1]}s, upgrade ${upgrades[-1]}s, delete ${deletes[-1]}s"
done

echo "median cluster create:  $(median "${creates[@]}")s over $runs runs (goal <= 45s)"
echo "median cluster scale:   $(median "${scales[@]}")s (goal <= 15s)"
echo "median cluster upgrade: $(median "${upgrades[@]}")s (goal <= 120s)"
echo "median cluster delete:  $(median "${deletes[@]}")s (goal <= 30s)"
