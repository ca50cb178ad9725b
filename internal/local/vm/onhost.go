package vm

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/slipway-dev/slipway/internal/local/proc"
)

// OnHost describes what nodes hold on this host, whichever store made them, keyed by what each
// is: their network namespaces (with the node's addresses on the bridge), the host's ends of
// their veths, their cgroups (with the processes left in them), and their containerd and kubelet
// processes wherever they are. Taken before and after a
// delete, it shows what the delete left.
func OnHost() map[string]string {
	held := map[string]string{}
	namespaces, _ := nodeNamespaces()
	for _, ns := range namespaces {
		addrs, _ := namespaceAddresses(ns)
		held["network namespace "+ns] = fmt.Sprint(addrs)
	}
	links, _ := os.ReadDir("/sys/class/net")
	for _, l := range links {
		if strings.HasPrefix(l.Name(), vethPrefix) {
			held["veth "+l.Name()] = ""
		}
	}
	mounts, err := hierarchies()
	if err != nil {
		held["cgroups unread"] = err.Error()
	}
	for _, m := range mounts {
		cgroups, _ := os.ReadDir(filepath.Join(m, cgroupParent))
		for _, c := range cgroups {
			if _, ok := held["cgroup "+c.Name()]; ok || !c.IsDir() {
				continue
			}
			pids, _ := cgroupProcesses(c.Name())
			held["cgroup "+c.Name()] = fmt.Sprintf("processes %v", pids)
		}
	}
	// A node's containerd or kubelet outside every node's cgroup (moved out, or its cgroup gone
	// before it) is still a node's.
	containerd := proc.WithArgs([]string{"containerd", "--config", "/etc/containerd/config.toml"})
	for _, pid := range append(containerd, proc.Mentioning(kubeletBootstrapFlag)...) {
		held["process "+strconv.Itoa(pid)] = strings.Join(proc.Cmdline(pid), " ")
	}
	return held
}
