#!/usr/bin/env bash
# Removes from this host what nodes of the local runtime, their load balancers and the e2e suite
# leave behind when a run is killed before it cleans up: the processes in slipway's cgroups, the
# cgroups, the nodes' network namespaces and veth pairs, the bridge (with the load balancers'
# addresses on it) and the vCenter simulator's test address on loopback. Only for a host that
# runs nothing of slipway's that should be kept: CI runs it before `make test`.
set -uo pipefail

removed=0
say() { echo "clean-host: $*"; removed=$((removed + 1)); }

# Every process of a node is in the node's cgroup under slipway/ in each hierarchy, its pods'
# containers deep below it (kubepods/<class>/<pod>/<container>).
for _ in 1 2 3; do
	pids=$(find /sys/fs/cgroup/*/slipway -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
	[ -z "$pids" ] && break
	say "killing processes in slipway's cgroups: $(echo $pids)"
	kill -9 $pids 2>/dev/null
	sleep 1
done
# Load balancers, registries and simulators slipway started as daemons.
for pid in $(pgrep -f '(^|/)slipway (local (lb|registry) run|vsphere simulator run|local node-service)' || true); do
	say "killing $(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null)"
	kill -9 "$pid" 2>/dev/null
done
for h in /sys/fs/cgroup/*/slipway; do
	[ -d "$h" ] || continue
	# Depth first: a cgroup goes only once its children have.
	while read -r dir; do
		# A node's own cgroup is named; the kubelet's and containers' under it go with it.
		rmdir "$dir" 2>/dev/null && [ "$(dirname "$dir")" = "$h" ] && say "removed cgroup $dir"
	done < <(find "$h" -mindepth 1 -type d | sort -r)
done
for link in /sys/class/net/slw*; do
	[ -e "$link" ] || continue
	ip link del "${link##*/}" && say "removed veth ${link##*/}"
done
for ns in $(ip netns list | awk '/^slipway-/ {print $1}'); do
	ip netns del "$ns" && say "removed network namespace $ns"
done
if [ -e /sys/class/net/slipway0 ]; then
	ip link del slipway0 && say "removed bridge slipway0 and its addresses"
fi
if ip -4 -o addr show dev lo | grep -q ' 203\.0\.113\.8/32 '; then
	ip addr del 203.0.113.8/32 dev lo && say "removed 203.0.113.8 from lo"
fi
echo "clean-host: $removed things removed"
