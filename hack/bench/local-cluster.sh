#!/usr/bin/env bash
# Measures the node agent's local runtime: the median time of `slipway local cluster create
# --node-runtime agent` for a 1-node cluster over RUNS runs (assets already built), and the peak
# memory of the whole node (node agent, etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler: the sum of each process's peak RSS, VmHWM, which bounds the peak of their sum)
# SETTLE seconds after creation.
# Usage: hack/bench/local-cluster.sh [RUNS=3] [SETTLE=30]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/hack/bench/lib.sh"
runs=${1:-3}
settle=${2:-30}

make -C "$root" build >/dev/null
[ -x "$root/bin/etcd/v3.6.5/etcd" ] || make -C "$root" assets

work=$(mktemp -d)
trap 'SLIPWAY_HOME=$work/home "$root/bin/slipway" local cluster delete bench >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
export SLIPWAY_HOME=$work/home KUBECONFIG=$work/kubeconfig

times=()
peaks=()
for i in $(seq 1 "$runs"); do
	start=$(date +%s.%N)
	"$root/bin/slipway" local cluster create bench --node-runtime agent >"$work/create.log" 2>&1 || { cat "$work/create.log"; exit 1; }
	end=$(date +%s.%N)
	times+=("$(echo "$end - $start" | bc)")
	sleep "$settle"
	total=0
	for pid in $(pgrep -f "$work/home/local/bench" || true); do
		kb=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
		total=$((total + ${kb:-0}))
	done
	peaks+=("$((total / 1024))")
	"$root/bin/slipway" local cluster delete bench >/dev/null
	echo "run $i: create ${times[-1]}s, node peak RSS ${peaks[-1]} MiB"
done

echo "median create time: $(median "${times[@]}")s over $runs runs (goal <= 20s)"
echo "median node peak RSS: $(median "${peaks[@]}") MiB, max $(printf '%s\n' "${peaks[@]}" | sort -n | tail -1) MiB (goal <= 700 MiB)"
