package hostlimits

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"syscall"
)

// RaiseEnv, set to true, lets slipway raise the kernel's limits itself when it runs as root.
const RaiseEnv = "SLIPWAY_RAISE_HOST_LIMITS"

// Need is what starting some nodes takes of each limit.
type Need struct {
	// Nodes is how many nodes, for the messages.
	Nodes                                            int
	InotifyInstances, InotifyWatches, Files, Threads int64
	// Memory and Disk are in bytes.
	Memory, Disk int64
}

// Add returns the sum of two needs.
func (n Need) Add(o Need) Need {
	return Need{Nodes: n.Nodes + o.Nodes, InotifyInstances: n.InotifyInstances + o.InotifyInstances,
		InotifyWatches: n.InotifyWatches + o.InotifyWatches, Files: n.Files + o.Files, Threads: n.Threads + o.Threads,
		Memory: n.Memory + o.Memory, Disk: n.Disk + o.Disk}
}

// Times returns k of a need.
func (n Need) Times(k int) Need {
	m := int64(k)
	return Need{Nodes: n.Nodes * k, InotifyInstances: n.InotifyInstances * m, InotifyWatches: n.InotifyWatches * m,
		Files: n.Files * m, Threads: n.Threads * m, Memory: n.Memory * m, Disk: n.Disk * m}
}

const mib = 1 << 20

// Profile is what one node of each role takes.
type Profile struct {
	ControlPlane, Worker Need
}

// Nodes is what controlPlanes and workers new nodes take.
func (p Profile) Nodes(controlPlanes, workers int) Need {
	return p.ControlPlane.Times(controlPlanes).Add(p.Worker.Times(workers))
}

// PerNode is what one node takes, measured on this project's 2-core host with room to grow
// (docs/local-runtime.md, "Host limits"): a control-plane node (containerd, the kubelet, the
// control plane's containers, CoreDNS) held 22 inotify instances, 293–353 watches, 663
// descriptors, 232 threads, 1.1 GiB and 916 MiB of disk; a worker 8 instances, 273 watches, 167
// descriptors, 82 threads, 390 MiB and 256 MiB of disk.
var (
	PerNode = Profile{
		ControlPlane: Need{Nodes: 1, InotifyInstances: 24, InotifyWatches: 400, Files: 1000, Threads: 300, Memory: 1200 * mib, Disk: 1000 * mib},
		Worker:       Need{Nodes: 1, InotifyInstances: 10, InotifyWatches: 300, Files: 300, Threads: 120, Memory: 450 * mib, Disk: 300 * mib},
	}
)

// Limit is one of the host's limits: its value, what is in use and what the new nodes need.
type Limit struct {
	// Name is the sysctl's name (fs.inotify.max_user_instances), or "memory" or "disk".
	Name               string
	Value, InUse, Need int64
	// Bytes says the figures are bytes.
	Bytes bool
	// sysctl is the file under /proc/sys of a kernel limit; empty for memory and disk, which no
	// command raises.
	sysctl string
	// fix is what frees memory or disk.
	fix string
}

// Short says whether the new nodes would pass the limit.
func (l Limit) Short() bool { return l.InUse+l.Need > l.Value }

// raiseTo is the value a kernel limit is raised to: what is needed with room for as much again,
// and at least kind's advice for inotify (1024 instances, 524288 watches).
func (l Limit) raiseTo() int64 {
	v := 2 * (l.InUse + l.Need)
	if floor := raiseFloor[l.Name]; v < floor {
		v = floor
	}
	return v
}

var raiseFloor = map[string]int64{"fs.inotify.max_user_instances": 1024, "fs.inotify.max_user_watches": 524288}

func (l Limit) figure(v int64) string {
	if l.Bytes {
		return fmt.Sprintf("%.1f GiB", float64(v)/(1<<30))
	}
	return strconv.FormatInt(v, 10)
}

// String says the limit, its use and the need, and how to raise it.
func (l Limit) String() string {
	if l.sysctl == "" {
		return fmt.Sprintf("%s: %s available, the new nodes need about %s: %s", l.Name, l.figure(l.Value-l.InUse), l.figure(l.Need), l.fix)
	}
	return fmt.Sprintf("%s is %s with %s in use, and the new nodes need about %s more: raise it with `sysctl -w %s=%d` as root",
		l.Name, l.figure(l.Value), l.figure(l.InUse), l.figure(l.Need), l.Name, l.raiseTo())
}

// Host is where the limits are read: Proc is procfs (/proc), Store the directory the nodes' state
// goes in, for its file system's free space.
type Host struct {
	Proc, Store string
}

// Read returns every limit with what is in use and need's share of it.
func (h Host) Read(need Need) ([]Limit, error) {
	var limits []Limit
	sysctl := func(name string, inUse, need int64) error {
		v, err := h.readInt(filepath.Join("sys", strings.ReplaceAll(name, ".", "/")))
		if err != nil {
			return err
		}
		limits = append(limits, Limit{Name: name, Value: v, InUse: inUse, Need: need, sysctl: name})
		return nil
	}
	instances, watches, err := h.inotifyInUse()
	if err != nil {
		return nil, err
	}
	if err := sysctl("fs.inotify.max_user_instances", instances, need.InotifyInstances); err != nil {
		return nil, err
	}
	if err := sysctl("fs.inotify.max_user_watches", watches, need.InotifyWatches); err != nil {
		return nil, err
	}
	// fs/file-nr: allocated handles, free allocated handles, the maximum.
	fileNR, err := h.readFields("sys/fs/file-nr")
	if err != nil {
		return nil, err
	}
	if len(fileNR) != 3 {
		return nil, fmt.Errorf("%s/sys/fs/file-nr reads %v", h.Proc, fileNR)
	}
	limits = append(limits, Limit{Name: "fs.file-max", Value: fileNR[2], InUse: fileNR[0] - fileNR[1], Need: need.Files, sysctl: "fs.file-max"})
	// loadavg's fourth field is running/total scheduling entities: the threads in use.
	threads, err := h.threadsInUse()
	if err != nil {
		return nil, err
	}
	if err := sysctl("kernel.threads-max", threads, need.Threads); err != nil {
		return nil, err
	}
	if err := sysctl("kernel.pid_max", threads, need.Threads); err != nil {
		return nil, err
	}
	total, available, err := h.memory()
	if err != nil {
		return nil, err
	}
	limits = append(limits, Limit{Name: "memory", Value: total, InUse: total - available, Need: need.Memory, Bytes: true,
		fix: "delete a local cluster you no longer need (slipway local cluster list) or stop other programs"})
	if h.Store != "" {
		free, size, err := freeSpace(h.Store)
		if err != nil {
			return nil, err
		}
		limits = append(limits, Limit{Name: "disk (" + h.Store + ")", Value: size, InUse: size - free, Need: need.Disk, Bytes: true,
			fix: "free space on that file system, or delete a local cluster you no longer need"})
	}
	return limits, nil
}

// Check refuses when need would pass one of the host's limits, naming each with its value, what
// is needed and how to raise it. With raise (and as root) it raises the kernel's limits that
// fall short and says so through report; memory and disk it can only report.
func (h Host) Check(need Need, raise bool, report func(string)) error {
	limits, err := h.Read(need)
	if err != nil {
		return fmt.Errorf("failed to read the host's limits: %w", err)
	}
	var short []string
	for _, l := range limits {
		if !l.Short() {
			continue
		}
		if raise && l.sysctl != "" {
			to := l.raiseTo()
			if err := h.write(l.sysctl, to); err != nil {
				short = append(short, fmt.Sprintf("%s (raising it failed: %v)", l, err))
				continue
			}
			report(fmt.Sprintf("Raised %s from %d to %d: %d in use and the %d new nodes need about %d more", l.Name, l.Value, to, l.InUse, need.Nodes, l.Need))
			continue
		}
		short = append(short, l.String())
	}
	if len(short) == 0 {
		return nil
	}
	msg := fmt.Sprintf("this host cannot start %d more nodes:\n  %s", need.Nodes, strings.Join(short, "\n  "))
	if !raise {
		msg += fmt.Sprintf("\n(or set %s=true and run slipway as root: it raises the kernel's limits itself)", RaiseEnv)
	}
	return errors.New(msg)
}

// RaiseAllowed says whether the user lets slipway raise the kernel's limits (RaiseEnv).
func RaiseAllowed() bool {
	v, _ := strconv.ParseBool(os.Getenv(RaiseEnv))
	return v
}

// write sets a kernel limit; only root may.
func (h Host) write(name string, v int64) error {
	path := filepath.Join(h.Proc, "sys", strings.ReplaceAll(name, ".", "/"))
	return os.WriteFile(path, []byte(strconv.FormatInt(v, 10)+"\n"), 0o644)
}

func (h Host) readFields(rel string) ([]int64, error) {
	data, err := os.ReadFile(filepath.Join(h.Proc, rel))
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, f := range strings.Fields(string(data)) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", h.Proc, rel, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func (h Host) readInt(rel string) (int64, error) {
	f, err := h.readFields(rel)
	if err != nil {
		return 0, err
	}
	if len(f) != 1 {
		return 0, fmt.Errorf("%s/%s reads %v, not one number", h.Proc, rel, f)
	}
	return f[0], nil
}

// inotifyInUse counts the inotify instances and watches of this user's processes: the kernel
// counts both per real user.
func (h Host) inotifyInUse() (instances, watches int64, err error) {
	procs, err := os.ReadDir(h.Proc)
	if err != nil {
		return 0, 0, err
	}
	uid := os.Getuid()
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		dir := filepath.Join(h.Proc, p.Name())
		if owner, ok := realUID(dir); !ok || owner != uid {
			continue
		}
		fds, err := os.ReadDir(filepath.Join(dir, "fd"))
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(dir, "fd", fd.Name())); err != nil || target != "anon_inode:inotify" {
				continue
			}
			instances++
			info, err := os.ReadFile(filepath.Join(dir, "fdinfo", fd.Name()))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(info), "\n") {
				if strings.HasPrefix(line, "inotify wd:") {
					watches++
				}
			}
		}
	}
	return instances, watches, nil
}

// realUID reads the real user of a process from its status.
func realUID(dir string) (int, bool) {
	data, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			uid, err := strconv.Atoi(f[0])
			return uid, err == nil
		}
	}
	return 0, false
}

func (h Host) threadsInUse() (int64, error) {
	data, err := os.ReadFile(filepath.Join(h.Proc, "loadavg"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data))
	if len(f) < 4 {
		return 0, fmt.Errorf("%s/loadavg reads %q", h.Proc, data)
	}
	_, total, ok := strings.Cut(f[3], "/")
	if !ok {
		return 0, fmt.Errorf("%s/loadavg reads %q", h.Proc, data)
	}
	return strconv.ParseInt(total, 10, 64)
}

// memory reads MemTotal and MemAvailable, in bytes.
func (h Host) memory() (total, available int64, err error) {
	data, err := os.ReadFile(filepath.Join(h.Proc, "meminfo"))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			total = v * 1024
		case "MemAvailable:":
			available = v * 1024
		}
	}
	if total == 0 || available == 0 {
		return 0, 0, fmt.Errorf("%s/meminfo lacks MemTotal or MemAvailable", h.Proc)
	}
	return total, available, nil
}

// freeSpace returns the free bytes (for an unprivileged user) and the size of dir's file system,
// or of its nearest existing parent.
func freeSpace(dir string) (free, size int64, err error) {
	for {
		var st syscall.Statfs_t
		err := syscall.Statfs(dir, &st)
		if err == nil {
			return int64(st.Bavail) * st.Bsize, int64(st.Blocks) * st.Bsize, nil
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, syscall.ENOENT) || parent == dir {
			return 0, 0, fmt.Errorf("failed to read the free space of %s: %w", dir, err)
		}
		dir = parent
	}
}
