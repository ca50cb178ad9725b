#!/usr/bin/env bash
# Measures the package controller on a real API server (envtest): the install time of one
# PackageInstall of a 50-object package, and the time for 100 PackageInstalls created at once to
# converge, each over RUNS runs. Usage: hack/bench/packages.sh [RUNS=5]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-5}
[ -x "$root/bin/etcd/v3.6.5/etcd" ] || make -C "$root" assets
cd "$root"
go test -count=1 -run '^$' -bench . -benchtime="${runs}x" ./internal/controllers/packaging/packageinstall/ |
	awk '/^Benchmark/ {printf "%s: %.2f s per run over %s runs\n", $1, $3/1e9, $2}'
