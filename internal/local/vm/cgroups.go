package vm

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupParent is the cgroup under which every node has its subtree, in every hierarchy.
const cgroupParent = "slipway"

// CgroupRoot is the node's cgroup, the kubelet's cgroupRoot: its directory exists in every
// hierarchy, as the kubelet requires.
func CgroupRoot(dir string) string { return "/" + cgroupParent + "/" + namespaceName(dir) }

// hierarchies returns the mount points of the host's cgroup hierarchies (v1 controllers, named
// hierarchies and the unified one).
func hierarchies() ([]string, error) {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mounts []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) >= 3 && (fields[2] == "cgroup" || fields[2] == "cgroup2") {
			mounts = append(mounts, fields[1])
		}
	}
	if len(mounts) == 0 {
		return nil, errors.New("no cgroup hierarchy is mounted")
	}
	return mounts, scanner.Err()
}

// createCgroups makes the node's cgroup in every hierarchy. A cpuset cgroup takes no process
// until it has CPUs and memory nodes, so those are copied from its parent.
func createCgroups(name string) error {
	mounts, err := hierarchies()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		for _, d := range []string{filepath.Join(m, cgroupParent), filepath.Join(m, cgroupParent, name)} {
			if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("failed to make cgroup %s: %w", d, err)
			}
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				if err := inherit(d, f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// inherit copies a cpuset file from the cgroup's parent when the cgroup has it empty.
func inherit(dir, file string) error {
	own, err := os.ReadFile(filepath.Join(dir, file))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && strings.TrimSpace(string(own)) != "") {
		return nil
	}
	if err != nil {
		return err
	}
	parent, err := os.ReadFile(filepath.Join(filepath.Dir(dir), file))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, file), parent, 0o644)
}

// joinCgroups moves this process into the node's cgroup in every hierarchy; its children follow.
func joinCgroups(name string) error {
	mounts, err := hierarchies()
	if err != nil {
		return err
	}
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, m := range mounts {
		if err := os.WriteFile(filepath.Join(m, cgroupParent, name, "cgroup.procs"), pid, 0o644); err != nil {
			return fmt.Errorf("failed to join the node's cgroup in %s: %w", m, err)
		}
	}
	return nil
}

// cgroupPIDs returns every task in the node's cgroups, its sub-cgroups included: each thread, as
// the cgroups' tasks files list them (cgroup.procs leaves out a process whose leader has exited
// while other threads of it live, and the cgroup cannot be removed until they end). SIGKILL to
// any thread kills its whole process.
func cgroupPIDs(name string) ([]int, error) {
	mounts, err := hierarchies()
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, m := range mounts {
		root := filepath.Join(m, cgroupParent, name)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() || d.Name() != "tasks" {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil //nolint:nilerr // a cgroup removed meanwhile has no process
			}
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil && !slices.Contains(pids, pid) {
					pids = append(pids, pid)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return pids, nil
}

// killCgroups kills every process of the node with SIGKILL, as a VM is powered off, until none
// is left.
func killCgroups(name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pids, err := cgroupPIDs(name)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v of node cgroup %s outlived SIGKILL for %s", pids, name, timeout)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// deleteCgroups removes the node's cgroups, deepest first. A cgroup the kernel still holds for a
// moment after its last task exited refuses with EBUSY: it is tried again, with every task left
// killed again, until timeout.
func deleteCgroups(name string, timeout time.Duration) error {
	mounts, err := hierarchies()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for _, m := range mounts {
		var dirs []string
		root := filepath.Join(m, cgroupParent, name)
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			for {
				err := os.Remove(dirs[i])
				if err == nil || errors.Is(err, fs.ErrNotExist) {
					break
				}
				if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
					return fmt.Errorf("failed to remove cgroup %s: %w", dirs[i], err)
				}
				if err := killCgroups(name, time.Until(deadline)); err != nil {
					return err
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	return nil
}
