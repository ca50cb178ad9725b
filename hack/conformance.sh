#!/usr/bin/env bash
# Runs Kubernetes v1.35.4's conformance tests on a local cluster of real nodes and reports what
# passes. e2e.test and ginkgo are built from k8s.io/kubernetes in hack/tools/conformance (cached in
# bin/conformance/v1.35.4); the test images that can be made here (`go run ./hack/images
# conformance`: agnhost, busybox, nonroot, kitten, nautilus, nginx, jessie-dnsutils, nonewprivs,
# sample-apiserver, etcd, pause; the host needs Debian's busybox-static, bash, bind9-dnsutils, libc-bin, curl,
# netcat-openbsd and nginx-light, which they carry) are pushed to the local registry, through which real nodes pull
# registry.k8s.io; the cluster has 1 control-plane node and 2 workers at v1.35.4. It exits
# non-zero when a test failed or the suite did not finish.
#
# Usage: hack/conformance.sh [FOCUS]        FOCUS: the tests to run (default '\[Conformance\]')
#   SKIP=REGEXP   the tests not to run (default '\[Serial\]|\[Disruptive\]': they need the
#                 cluster to themselves, one at a time: the 29 took 30 min here)
#   TIMEOUT=60m   how long the whole run may take
#   PROCS=6       how many of the suite's processes run tests side by side (ginkgo -p), as
#                 sonobuoy runs the parallel part of the suite
#   KEEP=1        keep the cluster after the run
#   PACKAGES_REGISTRY=127.0.0.1:5000  the local registry, as make's
# The JUnit report and the suite's log are written to bin/conformance/<date>/.
set -euo pipefail

# The whole script is one function, read before it runs: editing the file during a run (which
# takes most of an hour) cannot change what the run does.
main() {
	root=$(cd "$(dirname "$0")/.." && pwd)
	focus=${1:-'\[Conformance\]'}
	skip=${SKIP:-'\[Serial\]|\[Disruptive\]'}
	timeout=${TIMEOUT:-60m}
	procs=${PROCS:-6}
	registry=${PACKAGES_REGISTRY:-127.0.0.1:5000}
	version=v1.35.4
	out=$root/bin/conformance/$version
	run=$root/bin/conformance/$(date +%Y%m%dT%H%M%S)
	mkdir -p "$run"

	make -C "$root" build assets images >/dev/null
	if [ ! -x "$out/e2e.test" ]; then
		echo "building e2e.test $version (cold: minutes)"
		start=$SECONDS
		ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=35"
		(cd "$root/hack/tools/conformance" && CGO_ENABLED=0 go test -c -trimpath -ldflags "$ldflags" -o "$out/e2e.test.tmp" k8s.io/kubernetes/test/e2e)
		mv "$out/e2e.test.tmp" "$out/e2e.test"
		echo "built e2e.test in $((SECONDS - start))s"
	fi
	[ -x "$out/ginkgo" ] || (cd "$root/hack/tools/conformance" && CGO_ENABLED=0 go build -trimpath -o "$out/ginkgo" github.com/onsi/ginkgo/v2/ginkgo)
	(cd "$root" && go run ./hack/images conformance "$registry")

	cluster=conformance
	kubeconfig=$run/kubeconfig
	"$root/bin/slipway" local cluster create "$cluster" --worker-nodes 2 --kubernetes-version "$version" --kubeconfig "$kubeconfig"
	[ "${KEEP:-}" = 1 ] || trap '"$root/bin/slipway" local cluster delete "$cluster" --kubeconfig "$kubeconfig" >/dev/null' EXIT

	echo "running e2e.test on $procs processes, focus '$focus', skip '$skip' (log: $run/e2e.log)"
	start=$SECONDS
	set +e
	"$out/ginkgo" --procs="$procs" --timeout="$timeout" --focus="$focus" --skip="$skip" --no-color --junit-report=junit.xml \
		--output-dir="$run" "$out/e2e.test" -- --kubeconfig="$kubeconfig" --provider=skeleton --report-dir="$run" >"$run/e2e.log" 2>&1
	rc=$?
	set -e
	echo "e2e.test exited $rc after $((SECONDS - start))s"

	# The JUnit report: one testcase per spec, with <skipped> or <failure> when it did not pass.
	junit=$run/junit.xml
	if [ ! -f "$junit" ]; then
		echo "no JUnit report in $run: see $run/e2e.log" >&2
		tail -20 "$run/e2e.log" >&2
		exit 1
	fi
	python3 - "$junit" "$focus" "$skip" <<'PY'
import re, sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
focus, skip_re = re.compile(sys.argv[2]), re.compile(sys.argv[3])
passed, failed, skipped, unreached = [], [], 0, 0
for c in cases:
    name = c.get("name", "")
    # The suite's setup and reports ([SynchronizedBeforeSuite], [ReportAfterSuite]...) are not tests.
    if not name.startswith("[It] "):
        continue
    if c.find("skipped") is not None:
        # A spec of the focus that did not run was cut off by the timeout (or an interrupt).
        if focus.search(name) and not skip_re.search(name):
            unreached += 1
        else:
            skipped += 1
    elif c.find("failure") is not None or c.find("error") is not None:
        failed.append(name)
    else:
        passed.append(name)
ran = len(passed) + len(failed)
print(f"conformance: {len(passed)} of {ran} run passed, {len(failed)} failed, {unreached} of the focus not reached (timeout), {skipped} skipped or outside it")
for name in failed:
    print("  FAILED", name)
PY
	exit "$rc"
}

main "$@"
