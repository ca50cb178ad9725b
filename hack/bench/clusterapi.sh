#!/usr/bin/env bash
# Measures issue 7's goals on this host over RUNS runs (assets built): the time to a
# bootstrap-ready cluster of the node agent's nodes (`slipway local cluster create --bootstrap
# --node-runtime agent`, as its goals and past figures were measured: the local cluster,
# kapp-controller, clusterctl init with cert-manager, core, kubeadm and local providers available,
# the management repository and tkg-pkg with every child reconciled; goal <= 60 s) and the time
# from applying a topology Cluster of the local ClusterClass that tkg-pkg installs (1 control plane
# + 1 worker, v1.34.3) to its Available condition (goal <= 60 s). Prints each run and the medians.
# Usage: hack/bench/clusterapi.sh [RUNS=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/hack/bench/lib.sh"
runs=${1:-3}

[ -x "$root/bin/etcd/v3.6.5/etcd" ] || make -C "$root" assets
make -C "$root" build providers packages >/dev/null

work=$(mktemp -d)
export SLIPWAY_HOME=$work/home KUBECONFIG=$work/kubeconfig
cleanup() {
	kubectl delete cluster bench-wc --ignore-not-found --timeout=3m >/dev/null 2>&1 || true
	"$root/bin/slipway" local cluster delete bench >/dev/null 2>&1 || true
}
trap 'cleanup; rm -rf "$work"' EXIT
sed 's/name: wc$/name: bench-wc/' "$root/docs/examples/local-workload-cluster.yaml" >"$work/cluster.yaml"

boot=()
avail=()
for i in $(seq 1 "$runs"); do
	start=$(date +%s.%N)
	"$root/bin/slipway" local cluster create bench --bootstrap --node-runtime agent >"$work/create.log" 2>&1 || { cat "$work/create.log"; exit 1; }
	end=$(date +%s.%N)
	boot+=("$(echo "$end - $start" | bc)")
	start=$(date +%s.%N)
	kubectl apply -f "$work/cluster.yaml" >/dev/null
	kubectl wait cluster/bench-wc --for=condition=Available --timeout=5m >/dev/null
	end=$(date +%s.%N)
	avail+=("$(echo "$end - $start" | bc)")
	cleanup
	echo "run $i: bootstrap-ready ${boot[-1]}s, workload cluster Available ${avail[-1]}s"
done

echo "median bootstrap-ready: $(median "${boot[@]}")s over $runs runs (goal <= 60s)"
echo "median workload cluster Available: $(median "${avail[@]}")s over $runs runs (goal <= 60s)"
