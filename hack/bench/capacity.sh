#!/usr/bin/env bash
# Measures how many workload clusters fit on this host (issue 38): on one local management
# cluster (dev), it adds workload clusters of 1 control plane and 1 worker (v1.34.3, flat file)
# one at a time until one does not become Available within TIMEOUT (or slipway refuses it, naming
# a host limit), or MAX clusters run, or BUDGET minutes have passed. After each it samples the
# host: memory in use (MemTotal - MemAvailable), inotify instances and watches, open file
# descriptors, processes, threads, the 1-minute load, and the management cluster's reconcile
# latency: the time from `cluster scale` of the first workload cluster to 2 workers until the
# new Machine is Running (it is scaled back to 1 afterwards, untimed). The host's kernel limits
# are raised by slipway's own check (SLIPWAY_RAISE_HOST_LIMITS=true, as root). At the end it
# prints where the CPU goes, by process group, over a minute (hack/bench/cpuuse).
# Usage: hack/bench/capacity.sh [MAX=30] [BUDGET minutes=90] [TIMEOUT=5m]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/hack/bench/lib.sh"
max=${1:-30}
budget=${2:-90}
timeout=${3:-5m}
slipway=$root/bin/slipway
kubectl=$root/bin/k8s/v1.35.4/kubectl

[ -x "$root/bin/etcd/v3.6.5/etcd" ] || make -C "$root" assets
make -C "$root" build images providers packages >/dev/null

# The nodes pull from the local registry of slipway's own home, which `make images` fills, so the
# bench runs there. At the end its workload clusters go first, all at once, as TKG refuses to
# delete a management cluster that still manages some; then the management cluster.
work=$(mktemp -d)
export KUBECONFIG=$work/kubeconfig SLIPWAY_RAISE_HOST_LIMITS=true
cleanup() {
	for i in $(seq 1 "$max"); do
		"$slipway" cluster delete "wc-$i" -y >/dev/null 2>&1 &
	done
	wait
	"$slipway" management-cluster delete capacity -y >/dev/null 2>&1 ||
		echo "management-cluster delete capacity failed: delete it and its workload clusters by hand" >&2
	rm -rf "$work"
}
trap cleanup EXIT

limits() {
	printf 'fs.inotify.max_user_instances=%s fs.inotify.max_user_watches=%s fs.file-max=%s kernel.threads-max=%s\n' \
		"$(cat /proc/sys/fs/inotify/max_user_instances)" "$(cat /proc/sys/fs/inotify/max_user_watches)" \
		"$(cat /proc/sys/fs/file-max)" "$(cat /proc/sys/kernel/threads-max)"
}
echo "host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo); limits before: $(limits)"

start=$SECONDS
"$slipway" management-cluster create --name capacity >"$work/mc.log" 2>&1 || { cat "$work/mc.log"; exit 1; }
echo "management cluster created in $((SECONDS - start)) s; limits now: $(limits)"

# sample: memory in use (GiB), inotify instances, inotify watches, descriptors, processes,
# threads, 1-minute load.
sample() {
	local mem inst watches fds procs threads load
	mem=$(awk '/MemTotal/ {t=$2} /MemAvailable/ {a=$2} END {printf "%.1f", (t-a)/1048576}' /proc/meminfo)
	inst=$(find /proc/[0-9]*/fd -lname 'anon_inode:inotify' 2>/dev/null | wc -l)
	watches=$(cat /proc/[0-9]*/fdinfo/* 2>/dev/null | grep -c '^inotify wd:' || true)
	fds=$(find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	procs=$(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)
	read -r load _ _ threads _ </proc/loadavg
	threads=${threads#*/}
	printf '%6s %8s %8s %8s %6s %7s %5s' "$mem" "$inst" "$watches" "$fds" "$procs" "$threads" "$load"
}

# machines CLUSTER PHASE: how many of the cluster's Machines are in PHASE.
machines() {
	"$kubectl" --context capacity-admin@capacity get machines -n default -l "cluster.x-k8s.io/cluster-name=$1" \
		-o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c "^$2\$" || true
}

# latency: seconds from `cluster scale` of wc-1 to 2 workers until 3 of its Machines run (it
# prints "-" when that takes more than 5 minutes); then back to 1 worker.
latency() {
	local t0 t1 n
	t0=$(date +%s.%N)
	"$slipway" cluster scale wc-1 -w 2 >/dev/null 2>&1 || { echo "-"; return; }
	for _ in $(seq 1 1500); do
		n=$(machines wc-1 Running)
		[ "$n" -ge 3 ] && break
		sleep 0.2
	done
	t1=$(date +%s.%N)
	if [ "$n" -ge 3 ]; then printf '%.1f' "$(echo "$t1 - $t0" | bc)"; else echo "-"; fi
	"$slipway" cluster scale wc-1 -w 1 >/dev/null 2>&1 || true
	for _ in $(seq 1 600); do
		[ "$(machines wc-1 '.*')" -le 2 ] && break
		sleep 0.5
	done
}

printf '%8s %8s %9s %6s %8s %8s %8s %6s %7s %5s\n' clusters create_s scale_s mem_GiB inotify watches fds procs threads load
printf '%8s %8s %9s %s\n' 0 - - "$(sample)"
stop=""
for i in $(seq 1 "$max"); do
	if [ $((SECONDS - start)) -ge $((budget * 60)) ]; then
		stop="the budget of $budget minutes"
		break
	fi
	name=wc-$i
	printf 'CLUSTER_NAME: %s\nCLUSTER_PLAN: dev\nWORKER_MACHINE_COUNT: 1\nKUBERNETES_VERSION: v1.34.3\n' "$name" >"$work/$name.yaml"
	t0=$(date +%s.%N)
	if ! "$slipway" cluster create -f "$work/$name.yaml" -t "$timeout" >"$work/$name.log" 2>&1; then
		printf '%8s %8s %9s %s\n' "$((i - 1))" failed - "$(sample)"
		stop="workload cluster $name, which did not become Available within $timeout:"$'\n'"$(tail -n 15 "$work/$name.log")"
		break
	fi
	create=$(printf '%.1f' "$(echo "$(date +%s.%N) - $t0" | bc)")
	printf '%8s %8s %9s %s\n' "$i" "$create" "$(latency)" "$(sample)"
done
echo "stopped at ${stop:-the maximum of $max clusters}"
echo "limits at the end: $(limits)"
# Where the CPU goes with the clusters that run, idle: what item 3 of issue 38 cuts.
(cd "$root" && go run ./hack/bench/cpuuse -for 60s -top 30)
