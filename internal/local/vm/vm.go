package vm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slipway-dev/slipway/internal/local/hostnet"
	"github.com/slipway-dev/slipway/internal/local/proc"
)

// Spec is what a node is made from, kept in its state directory as node.json.
type Spec struct {
	// Name is the node's host name, a DNS-1123 label.
	Name string `json:"name"`
	// Address is the node's address on the bridge.
	Address netip.Addr `json:"address"`
	// BinDir holds the kubelet and kubeadm of the node's Kubernetes version; the node's commands
	// find them on PATH, as on a node image.
	BinDir string `json:"binDir"`
	// SandboxImage is the pause image containerd runs for every pod.
	SandboxImage string `json:"sandboxImage"`
	// Mirrors maps a registry's host (projects.registry.vmware.com) to the URL that serves its
	// repositories to the node (http://198.18.0.1:5000).
	Mirrors map[string]string `json:"mirrors,omitempty"`
	// ProviderID is the node's spec.providerID, which the kubelet registers with, as a cloud
	// provider sets a VM's (local://<namespace>/<machine> for a machine of the local provider).
	ProviderID string `json:"providerID,omitempty"`
	// LoopbackRegistry is the local registry's address on the host's loopback (127.0.0.1:5000),
	// which the node answers on its own loopback by forwarding to the registry on the bridge.
	LoopbackRegistry string `json:"loopbackRegistry,omitempty"`
	// HostRegistries are more registries on the host's loopback (a copy TKG_CUSTOM_IMAGE_REPOSITORY
	// names), answered on the node's loopback in the same way.
	HostRegistries []string `json:"hostRegistries,omitempty"`
	// Egress are the destinations off the bridge the node and its pods reach, each through the
	// node's init process, which dials it from the host (see egress.go): a vCenter and a
	// control-plane endpoint elsewhere. Each is checked by CheckEgress.
	Egress []netip.AddrPort `json:"egress,omitempty"`
	// EgressNames are the names of egress destinations (lower case, no final dot) with the
	// addresses this host resolved them to, which the node answers to DNS queries on its own
	// address: its pods resolve them through CoreDNS, which forwards to the node.
	EgressNames map[string][]netip.Addr `json:"egressNames,omitempty"`
	// NodeServiceDir is the host's directory where the node service of the node's store listens,
	// bound at NodeServicePath in the node: a pod of the local infrastructure provider mounts it.
	NodeServiceDir string `json:"nodeServiceDir,omitempty"`
}

// NodeServicePath is where a node has its store's node service (vm.Spec.NodeServiceDir), as a
// Docker host has /var/run/docker.sock.
const NodeServicePath = "/run/slipway"

// Validate says what is wrong with the spec, naming the field.
func (s Spec) Validate() error {
	switch {
	case s.Name == "":
		return errors.New("node spec: name is empty")
	case !s.Address.IsValid() || !hostnet.Network.Contains(s.Address) || s.Address == hostnet.HostAddress:
		return fmt.Errorf("node spec: address %s is not a node's address in %s", s.Address, hostnet.Network)
	case s.BinDir == "":
		return errors.New("node spec: binDir is empty: it must hold the kubelet and kubeadm (make assets)")
	case s.SandboxImage == "":
		return errors.New("node spec: sandboxImage is empty")
	}
	for _, d := range s.Egress {
		if err := CheckEgress(d); err != nil {
			return fmt.Errorf("node spec: %w", err)
		}
	}
	for _, b := range []string{"kubelet", "kubeadm"} {
		if _, err := os.Stat(filepath.Join(s.BinDir, b)); err != nil {
			return fmt.Errorf("node spec: binDir %s has no %s: run make assets: %w", s.BinDir, b, err)
		}
	}
	return nil
}

// Files of a node's state directory.
const (
	specFile     = "node.json"
	userDataFile = "user-data"
	// bootedFile records that the node executed its cloud-init, as cloud-init's boot-finished.
	bootedFile = "cloud-init.done"
	pidFile    = "boot.pid"
	// powerLockFile serialises Start and Delete.
	powerLockFile = "power.lock"
	// rootDir holds what is bind-mounted over the node's fixed paths.
	rootDir = "root"
	logsDir = "logs"
)

// BootArgs begin the arguments of a node's init process, after the executable.
var BootArgs = []string{"local", "node", "boot", "--dir"}

// Create writes the node's state directory (spec and cloud-init user data), makes its network
// namespace on the bridge and its cgroups. It does not start it.
func Create(dir string, spec Spec, userData []byte) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, logsDir), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, specFile), data, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, userDataFile), userData, 0o600); err != nil {
		return err
	}
	if err := EnsureBridge(); err != nil {
		return err
	}
	if err := createNetwork(dir, spec.Address); err != nil {
		return err
	}
	return createCgroups(namespaceName(dir))
}

// RootPath is where path of the node (/etc/kubernetes/pki) is kept in its state directory, for
// what is written into a node before it boots, as a VM image's files are.
func RootPath(dir, path string) string { return filepath.Join(dir, rootDir, path) }

// LogPath is the path of one of the node's logs (cloud-init-output.log, kubelet.log).
func LogPath(dir, name string) string { return filepath.Join(dir, logsDir, name) }

// LogTail is the last n lines of one of the node's logs, or "" when it has none: what an error
// about the node shows, since a failed create deletes the node and its logs with it.
func LogTail(dir, name string, n int) string {
	data, err := os.ReadFile(LogPath(dir, name))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Booted says whether the node executed its cloud-init, and how it ended ("finished" or
// "failed: …").
func Booted(dir string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(dir, bootedFile))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(data)), true
}

// ReadSpec reads the spec a node was created with.
func ReadSpec(dir string) (Spec, error) {
	var s Spec
	data, err := os.ReadFile(filepath.Join(dir, specFile))
	if err != nil {
		return s, fmt.Errorf("no node in %s: %w", dir, err)
	}
	return s, json.Unmarshal(data, &s)
}

// Start starts the node's init process, detached, in the node's network namespace and in new
// mount and UTS namespaces, unless it runs. It returns the init process's pid. After a host
// restart, which takes the bridge, network namespaces and cgroups with it, it makes them again
// first; after its init process died, it kills what is left of the node first.
func Start(dir, executable string) (int, error) {
	var pid int
	err := withPowerLock(dir, func() error {
		var err error
		pid, err = start(dir, executable)
		return err
	})
	return pid, err
}

func start(dir, executable string) (int, error) {
	if pid, ok := Running(dir); ok {
		return pid, nil
	}
	spec, err := ReadSpec(dir)
	if err != nil {
		return 0, err
	}
	if err := EnsureBridge(); err != nil {
		return 0, err
	}
	if err := createNetwork(dir, spec.Address); err != nil {
		return 0, err
	}
	// An init process that died (kill -9) left the node's containerd, kubelet and containers
	// running in namespaces no new init can join: the node is reset as a VM whose kernel died,
	// every process of it killed, before it boots again, and its cgroups are made anew, as a
	// booting kernel's are: a kubelet that finds the cgroups of its last boot's containers looks
	// for each one's task in containerd, 3 s apiece, before it syncs any pod (25 s on a worker,
	// 95 s on a control-plane node, measured). Its cloud-init does not run twice.
	ns := namespaceName(dir)
	if err := powerOff(ns); err != nil {
		return 0, fmt.Errorf("failed to reset node %s: %w", spec.Name, err)
	}
	if err := createCgroups(ns); err != nil {
		return 0, err
	}
	// nsenter joins the network namespace, which a new process cannot be cloned into; the mount
	// and UTS namespaces are new from the clone.
	// The host's network namespace goes with it (hostNetworkFD), for the node's egress.
	hostNet, err := os.Open("/proc/self/ns/net")
	if err != nil {
		return 0, err
	}
	defer hostNet.Close()
	args := append([]string{"nsenter", "--net=" + namespacePath(ns), "--", executable}, BootArgs...)
	pid, err := proc.SpawnDetachedIn(append(args, dir), filepath.Join(dir, logsDir, "boot.log"), filepath.Join(dir, pidFile),
		syscall.CLONE_NEWNS|syscall.CLONE_NEWUTS, hostNet)
	if err != nil {
		return 0, fmt.Errorf("failed to start the node in %s: %w", dir, err)
	}
	return pid, nil
}

// withPowerLock runs f holding the node's power lock, so that a start and a delete of the same
// node (its provider supervising it while a CLI deletes its cluster) never interleave. The lock
// is a file of the node's directory, which is not made again: once the node is deleted, a start
// that waited for the lock finds no node.
func withPowerLock(dir string, f func() error) error {
	return proc.WithLockIn(filepath.Join(dir, powerLockFile), f)
}

// Running returns the pid of the node's init process when it runs.
func Running(dir string) (int, bool) {
	path := filepath.Join(dir, pidFile)
	// nsenter keeps its pid when it executes slipway: before then, it is not yet the node.
	if !proc.Alive(path, append(append([]string{"slipway"}, BootArgs...), dir)) {
		return 0, false
	}
	return proc.ReadPID(path), true
}

// Processes returns the pids of the processes the node at dir runs under its init: containerd,
// the kubelet and every container's, each process once (its cgroups list every thread).
func Processes(dir string) ([]int, error) { return cgroupProcesses(namespaceName(dir)) }

// cgroupProcesses returns the pids of the processes in a node's cgroups, each once.
func cgroupProcesses(name string) ([]int, error) {
	tasks, err := cgroupPIDs(name)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, task := range tasks {
		pid := threadGroup(task)
		if pid != 0 && !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// threadGroup returns the process a task (a thread) belongs to; 0 when it is gone.
func threadGroup(task int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(task), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			pid, _ := strconv.Atoi(strings.TrimSpace(v))
			return pid
		}
	}
	return 0
}

// Delete powers the node off and removes it: every process in its cgroups is killed (with it
// go its mount namespace and every mount in it), then its cgroups, its network namespace and
// veth pair, and its state directory.
func Delete(dir string) error {
	err := withPowerLock(dir, func() error { return deleteNode(dir) })
	if errors.Is(err, os.ErrNotExist) {
		// No directory: what may be left of the node on the host still goes.
		return deleteNode(dir)
	}
	return err
}

func deleteNode(dir string) error {
	if err := powerOff(namespaceName(dir)); err != nil {
		return err
	}
	if err := deleteNetwork(dir); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// powerOff ends what runs of the node whose cgroups are named ns, as a VM powered off: every
// process killed, then its cgroups removed, so that a new boot starts with none of them.
func powerOff(ns string) error {
	if err := killCgroups(ns, 10*time.Second); err != nil {
		return err
	}
	return deleteCgroups(ns, 10*time.Second)
}
