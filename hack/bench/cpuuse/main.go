// Command cpuuse says where a host's CPU and memory go: it reads every process's CPU time twice,
// a period apart, and prints the processes grouped by what they run (a binary by its name; a
// node's init, the load balancer and the daemons of slipway by their verb), with the CPU each group
// used over the period in percent of one core, its process count and resident memory. It is
// hack/bench/capacity.sh's last step (issue 38, item 3: use less).
//
// Usage: go run ./hack/bench/cpuuse [-for 60s] [-top 25]
package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// clockTicks is the kernel's USER_HZ, in which /proc/PID/stat counts CPU time: 100 on every
// Linux architecture slipway builds for.
const clockTicks = 100

// process is what one reading of /proc says of a process.
type process struct {
	group string
	ticks uint64
	rss   uint64 // bytes
}

func main() {
	period := flag.Duration("for", time.Minute, "how long CPU time is counted")
	top := flag.Int("top", 25, "how many groups are printed, the busiest first")
	flag.Parse()

	before := readAll()
	time.Sleep(*period)
	after := readAll()

	type use struct {
		group     string
		ticks     uint64
		rss       uint64
		processes int
	}
	groups := map[string]*use{}
	var total uint64
	for pid, p := range after {
		g := groups[p.group]
		if g == nil {
			g = &use{group: p.group}
			groups[p.group] = g
		}
		g.processes++
		g.rss += p.rss
		// A process that started during the period counts from zero.
		used := p.ticks
		if b, ok := before[pid]; ok && b.ticks <= p.ticks {
			used -= b.ticks
		}
		g.ticks += used
		total += used
	}
	sorted := make([]*use, 0, len(groups))
	for _, g := range groups {
		sorted = append(sorted, g)
	}
	slices.SortFunc(sorted, func(a, b *use) int {
		return cmp.Or(cmp.Compare(b.ticks, a.ticks), strings.Compare(a.group, b.group))
	})

	percent := func(ticks uint64) float64 { return float64(ticks) / clockTicks / period.Seconds() * 100 }
	// Processes that lived only between the two readings (probes, runc) are not counted.
	fmt.Printf("CPU over %s: %.0f%% of one core in all the processes seen at its end (%d cores)\n", *period, percent(total), cores())
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "CPU %\tprocesses\tRSS MiB\t\twhat")
	for i, g := range sorted {
		if i == *top {
			break
		}
		fmt.Fprintf(w, "%.1f\t%d\t%d\t\t%s\n", percent(g.ticks), g.processes, g.rss>>20, g.group)
	}
	w.Flush()
}

// readAll reads every process it can; one that exits while it reads is left out.
func readAll() map[int]process {
	entries, _ := os.ReadDir("/proc")
	all := map[int]process{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := read(pid); ok {
			all[pid] = p
		}
	}
	return all
}

func read(pid int) (process, bool) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return process{}, false
	}
	// The command's name may hold spaces and parentheses: the fields start after the last ')'.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return process{}, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	// Counted from the state (field 3): utime is field 14, stime 15, rss (pages) 24.
	if len(fields) < 22 {
		return process{}, false
	}
	utime, _ := strconv.ParseUint(fields[11], 10, 64)
	stime, _ := strconv.ParseUint(fields[12], 10, 64)
	pages, _ := strconv.ParseUint(fields[21], 10, 64)
	cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	return process{group: groupOf(args), ticks: utime + stime, rss: pages * uint64(os.Getpagesize())}, true
}

// groupOf names what a process runs.
func groupOf(args []string) string {
	if len(args) == 0 || args[0] == "" {
		return "kernel threads"
	}
	bin := filepath.Base(args[0])
	if bin != "slipway" {
		return bin
	}
	// The verb: slipway local node boot, slipway local lb run, slipway management-cluster create.
	var verb []string
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") || len(verb) == 3 {
			break
		}
		verb = append(verb, a)
	}
	return "slipway " + strings.Join(verb, " ")
}

func cores() int {
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(cpuinfo), "\nprocessor") + 1
}
