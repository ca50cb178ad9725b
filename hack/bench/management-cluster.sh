#!/usr/bin/env bash
# Measures issue 16's goals on this host over RUNS runs (assets built): the whole
# `slipway management-cluster create` (embedded default: local, dev plan, 1 control plane + 1
# worker, v1.35.4; goal <= 120 s) and each of its steps, from the step table it prints, and the
# peak memory of the run: the host's memory in use (MemTotal - MemAvailable) above what it was
# before the run, since a node's processes are containerd's and its containers' (sampled every
# second; goal <= 6 GiB). Each run is followed by `management-cluster delete`, timed too. Prints
# each run and the medians. The nodes (root) pull from the local registry of slipway's own home,
# which `make images` fills, so the bench runs there.
# Usage: hack/bench/management-cluster.sh [RUNS=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/hack/bench/lib.sh"
runs=${1:-3}

[ -x "$root/bin/etcd/v3.6.5/etcd" ] || make -C "$root" assets
make -C "$root" build providers packages >/dev/null

work=$(mktemp -d)
export KUBECONFIG=$work/kubeconfig
make -C "$root" images >/dev/null
printf 'CLUSTER_NAME: bench\nINFRASTRUCTURE_PROVIDER: local\n' >"$work/bench.yaml"
create_args=(-f "$work/bench.yaml")
# In slipway's own home, only what the bench made goes.
trap '"$root/bin/slipway" management-cluster delete bench -y >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# used_kib is the host's memory in use.
used_kib() {
	awk '/^MemTotal:/ {t = $2} /^MemAvailable:/ {a = $2} END {print t - a}' /proc/meminfo
}

# memory_kib is what a run's processes take: the host's memory in use above the run's baseline.
memory_kib() {
	echo $(($(used_kib) - baseline))
}

total=()
deletes=()
peaks=()
declare -A steps
for i in $(seq 1 "$runs"); do
	peak=0
	baseline=$(used_kib)
	start=$(date +%s.%N)
	"$root/bin/slipway" management-cluster create "${create_args[@]}" >"$work/create.log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		r=$(memory_kib)
		[ "$r" -gt "$peak" ] && peak=$r
		sleep 1
	done
	wait "$pid" || { cat "$work/create.log"; exit 1; }
	end=$(date +%s.%N)
	total+=("$(echo "$end - $start" | bc)")
	peaks+=("$peak")
	# The step table: "  NAME   DURATION" lines after "Steps:".
	while read -r line; do
		name=$(echo "$line" | sed -E 's/[[:space:]]+[0-9.]+(ms|s|m[0-9.]*s?)$//')
		dur=$(echo "$line" | awk '{print $NF}')
		steps[$name]+="$dur "
	done < <(sed -n '/^Steps:/,$p' "$work/create.log" | tail -n +2 | sed 's/^  //')
	start=$(date +%s.%N)
	"$root/bin/slipway" management-cluster delete bench -y >"$work/delete.log" 2>&1 || { cat "$work/delete.log"; exit 1; }
	end=$(date +%s.%N)
	deletes+=("$(echo "$end - $start" | bc)")
	echo "run $i: create ${total[-1]}s, delete ${deletes[-1]}s, peak memory $((peak / 1024)) MiB"
done

echo "median management-cluster create: $(median "${total[@]}")s over $runs runs (goal <= 150s)"
echo "median management-cluster delete: $(median "${deletes[@]}")s"
echo "median peak memory of the run's processes: $(($(median "${peaks[@]}") / 1024)) MiB (goal <= 6144 MiB)"
echo "steps (each run's duration as printed):"
for name in "${!steps[@]}"; do
	printf '  %-32s %s\n' "$name" "${steps[$name]}"
done
