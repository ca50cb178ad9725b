package vm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/local/hostnet"
)

// binds are the node's fixed paths, each bind-mounted from root/<path> of its state directory,
// so that kubeadm, the kubelet and containerd work unchanged.
var binds = []string{
	"/etc/kubernetes", "/etc/containerd", "/etc/cni/net.d",
	"/var/lib/kubelet", "/var/lib/containerd", "/var/lib/etcd", "/var/lib/cni",
	"/var/log", LocalPathDir,
}

// LocalPathDir is where the StorageClass's provisioner makes the node's volumes, one directory
// each (kind's path).
const LocalPathDir = "/var/local-path-provisioner"

// fileBinds are files of the host a node has its own of.
var fileBinds = []string{"/etc/hosts", "/etc/resolv.conf"}

// containerdSocket is where the node's containerd serves CRI.
const containerdSocket = "/run/containerd/containerd.sock"

// Boot is the node's init process, run by Start in the node's namespaces: it mounts the node's
// paths, takes its host name, then runs containerd and the kubelet, restarting them when they
// die, forwards the local registry's loopback address to the registry on the bridge and its
// egress destinations from the host, and
// executes the cloud-init of a first boot; a control-plane node then applies the pod network.
// It returns when the context ends.
func Boot(ctx context.Context, dir string) error {
	log := ctrl.LoggerFrom(ctx)
	// First, before anything the node starts could inherit it.
	hostNet := hostNetwork()
	spec, err := ReadSpec(dir)
	if err != nil {
		return err
	}
	if err := joinCgroups(namespaceName(dir)); err != nil {
		return err
	}
	if err := mountNode(dir, spec); err != nil {
		return err
	}
	if err := syscall.Sethostname([]byte(spec.Name)); err != nil {
		return fmt.Errorf("failed to set the host name: %w", err)
	}
	// Pods route through the node; this is the node's own namespace's setting, not the host's.
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
		return fmt.Errorf("failed to enable forwarding in the node: %w", err)
	}
	if err := writeNodeConfig(dir, spec); err != nil {
		return err
	}
	if hostNet != nil && len(spec.Egress) == 0 {
		hostNet.Close()
	}
	if len(spec.Egress) > 0 {
		if hostNet == nil {
			return errors.New("the node has egress destinations but its init process was started without the host's network namespace, as only an older slipway starts it: start the node with this one (`slipway local cluster start CLUSTER`)")
		}
		if err := applyEgress(spec.Address, spec.Egress); err != nil {
			return fmt.Errorf("failed to route the node's egress: %w", err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if err := writeNodeImage(exe, spec); err != nil {
		return fmt.Errorf("failed to write the node image's commands: %w", err)
	}
	env := append(os.Environ(), "PATH="+nodeImageBin+":"+spec.BinDir+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root")
	var wg sync.WaitGroup
	registries := append([]string{spec.LoopbackRegistry}, spec.HostRegistries...)
	slices.Sort(registries)
	for _, r := range slices.Compact(registries) {
		if r != "" {
			wg.Go(func() { forwardRegistry(ctx, r) })
		}
	}
	if len(spec.Egress) > 0 {
		wg.Go(func() { forwardEgress(ctx, spec.Address, spec.Egress, hostNet) })
	}
	if len(spec.EgressNames) > 0 {
		wg.Go(func() { serveEgressNames(ctx, spec.Address, spec.EgressNames) })
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		supervise(ctx, dir, "containerd", env, func() []string {
			return []string{"containerd", "--config", "/etc/containerd/config.toml"}
		})
	}()
	go func() {
		defer wg.Done()
		supervise(ctx, dir, "kubelet", env, func() []string { return kubeletArgs(dir, spec) })
	}()
	if err := firstBoot(ctx, dir, spec, env); err != nil {
		log.Error(err, "Cloud-init failed: the node stays up, as a VM does, for inspection")
	} else {
		ensurePodNetwork(ctx)
	}
	wg.Wait()
	return nil
}

// mountNode makes the node's mounts private to it, mounts a fresh /run, binds its paths and the
// node service's directory.
// Mounts made after are shared within the node (the kubelet's mount propagation needs it), not
// with the host.
func mountNode(dir string, spec Spec) error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("failed to make the node's mounts private: %w", err)
	}
	if err := syscall.Mount("tmpfs", "/run", "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=755"); err != nil {
		return fmt.Errorf("failed to mount the node's /run: %w", err)
	}
	if spec.NodeServiceDir != "" {
		if err := os.MkdirAll(spec.NodeServiceDir, 0o700); err != nil {
			return err
		}
		if err := os.MkdirAll(NodeServicePath, 0o700); err != nil {
			return err
		}
		if err := syscall.Mount(spec.NodeServiceDir, NodeServicePath, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("failed to bind the node service's directory %s over %s: %w", spec.NodeServiceDir, NodeServicePath, err)
		}
	}
	for _, p := range binds {
		src := filepath.Join(dir, rootDir, p)
		if err := os.MkdirAll(src, 0o755); err != nil {
			return err
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		if err := syscall.Mount(src, p, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("failed to bind %s over %s: %w", src, p, err)
		}
	}
	for _, p := range fileBinds {
		src := filepath.Join(dir, rootDir, p)
		if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
			return err
		}
		// A bind needs a file to mount; writeNodeConfig writes its content.
		f, err := os.OpenFile(src, os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return err
		}
		f.Close()
		if err := syscall.Mount(src, p, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("failed to bind %s over %s: %w", src, p, err)
		}
	}
	return syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_SHARED, "")
}

// resolvConf is the node's resolver: the host's, which no node reaches, is replaced by one that
// answers nothing (DNS inside clusters is CoreDNS's) or, for a node with named egress
// destinations, by the node itself, which answers those names.
func resolvConf(spec Spec) string {
	server := hostnet.HostAddress
	if len(spec.EgressNames) > 0 {
		server = spec.Address
	}
	return "# slipway's local runtime: nodes reach nothing off this host but their egress\nnameserver " + server.String() + "\noptions timeout:1 attempts:1\n"
}

// writeNodeConfig writes what a node image carries: its hosts file, its resolver (the host's,
// which no node reaches, is replaced by one that answers nothing: DNS inside clusters is
// CoreDNS's), containerd's configuration and its registry mirrors, and the kubelet's drop-in of
// this host's settings.
func writeNodeConfig(dir string, spec Spec) error {
	hosts := fmt.Sprintf("127.0.0.1\tlocalhost\n::1\tlocalhost\n%s\t%s\n", spec.Address, spec.Name)
	dropIn, err := hostKubeletConfig(dir, spec)
	if err != nil {
		return err
	}
	files := map[string]string{
		filepath.Join(kubeletConfigDir, "90-slipway-host.conf"): string(dropIn),
		"/etc/hosts":                  hosts,
		"/etc/resolv.conf":            resolvConf(spec),
		"/etc/containerd/config.toml": containerdConfig(spec.SandboxImage),
	}
	for host, url := range spec.Mirrors {
		files[filepath.Join("/etc/containerd/certs.d", host, "hosts.toml")] = hostsTOML(host, url)
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// kubeletBootstrapFlag is the flag of every node's kubelet that names kubeadm's bootstrap
// kubeconfig.
const kubeletBootstrapFlag = "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf"

// kubeletArgs are the kubelet's arguments as kubeadm's systemd drop-in gives them, once kubeadm
// has written the kubelet's configuration; before, the kubelet does not start (on a VM it
// crash-loops until then). What this host needs beyond kubeadm's configuration is a drop-in of
// the kubelet's own (--config-dir), which writeNodeConfig writes at boot and the kubelet merges
// over config.yaml: see hostKubeletConfig. A kubeletExtraArgs flag would still win over it.
func kubeletArgs(dir string, spec Spec) []string {
	if _, err := os.Stat("/var/lib/kubelet/config.yaml"); err != nil {
		return nil
	}
	args := []string{filepath.Join(spec.BinDir, "kubelet"),
		kubeletBootstrapFlag,
		"--kubeconfig=/etc/kubernetes/kubelet.conf",
		"--config=/var/lib/kubelet/config.yaml",
		"--config-dir=" + kubeletConfigDir,
	}
	return append(args, kubeadmFlags("/var/lib/kubelet/kubeadm-flags.env")...)
}

// kubeletConfigDir holds the kubelet's configuration drop-ins.
const kubeletConfigDir = "/etc/kubernetes/kubelet.conf.d"

// hostKubeletConfig is the KubeletConfiguration drop-in this host needs: no systemd (cgroupfs),
// cgroup v1, and the node's own cgroup; no eviction or image garbage collection for disk, as
// kind's nodes have none (every node's file systems are the host's one disk, whose free share
// says nothing of one node: with 24 GiB of 252 GiB free, the kubelet's default
// imagefs.available<15% put every node under DiskPressure), the memory threshold kept; then the
// providerID its machine was given, as a cloud provider gives a VM's. The kubelet merges a
// drop-in's maps key by key, so each default disk threshold is named to turn it off. Images are
// pulled in parallel (serializeImagePulls: false, as containerd allows): with the kubelet's
// default of one pull at a time, a node starting a management cluster's providers and packages
// kept pods waiting up to 3.5 s for other pods' pulls from the local registry.
func hostKubeletConfig(dir string, spec Spec) ([]byte, error) {
	config := map[string]any{
		"apiVersion":   "kubelet.config.k8s.io/v1beta1",
		"kind":         "KubeletConfiguration",
		"cgroupDriver": "cgroupfs",
		"failCgroupV1": false,
		"cgroupRoot":   CgroupRoot(dir),
		"evictionHard": map[string]string{
			"memory.available":   "100Mi",
			"nodefs.available":   "0%",
			"nodefs.inodesFree":  "0%",
			"imagefs.available":  "0%",
			"imagefs.inodesFree": "0%",
		},
		"imageGCHighThresholdPercent": 100,
		"serializeImagePulls":         false,
	}
	if spec.ProviderID != "" {
		config["providerID"] = spec.ProviderID
	}
	return yaml.Marshal(config)
}

// kubeadmFlags reads KUBELET_KUBEADM_ARGS from the environment file kubeadm writes.
func kubeadmFlags(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "KUBELET_KUBEADM_ARGS="); ok {
			return strings.Fields(strings.Trim(v, `"`))
		}
	}
	return nil
}

// supervise runs the command args returns, restarting it a second after it exits, as systemd's
// Restart=always does, until the context ends. While args returns nothing, it waits.
func supervise(ctx context.Context, dir, name string, env []string, args func() []string) {
	log := ctrl.LoggerFrom(ctx).WithValues("service", name)
	restarts := 0
	for ctx.Err() == nil {
		a := args()
		if len(a) == 0 {
			sleep(ctx, time.Second)
			continue
		}
		out, err := os.OpenFile(filepath.Join(dir, logsDir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			log.Error(err, "Cannot open the service's log")
			sleep(ctx, time.Second)
			continue
		}
		cmd := exec.Command(a[0], a[1:]...)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, out, out
		start := time.Now()
		err = run(ctx, cmd)
		out.Close()
		if ctx.Err() != nil {
			return
		}
		restarts++
		log.Info("Service exited; restarting it", "error", fmt.Sprint(err), "ranFor", time.Since(start).Round(time.Millisecond).String(), "restarts", restarts)
		sleep(ctx, time.Second)
	}
}

// run runs cmd until it exits or the context ends, when it is sent SIGTERM, then SIGKILL after 10 s.
func run(ctx context.Context, cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			return <-done
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// firstBoot executes the node's cloud-init once, when containerd answers, and records that it
// did; a node started again (after a host restart) does not run kubeadm again, as a VM does not.
func firstBoot(ctx context.Context, dir string, spec Spec, env []string) error {
	if _, err := os.Stat(filepath.Join(dir, bootedFile)); err == nil {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, userDataFile))
	if err != nil {
		return err
	}
	cfg, err := parseUserData(data, spec.Name)
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		if _, err := os.Stat(containerdSocket); err == nil {
			break
		}
		sleep(ctx, 100*time.Millisecond)
	}
	out, err := os.OpenFile(filepath.Join(dir, logsDir, "cloud-init-output.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	start := time.Now()
	result := cfg.run(ctx, env, out)
	status := "finished"
	if result != nil {
		status = "failed: " + result.Error()
	}
	fmt.Fprintf(out, "cloud-init: %s after %s\n", status, time.Since(start).Round(time.Millisecond))
	if err := recordBoot(dir, status); err != nil {
		return errors.Join(result, err)
	}
	return result
}

// recordBoot writes how the node's cloud-init ended where Booted reads it. It writes a file
// beside it and renames it into place, so that a reader never sees it empty or half written.
func recordBoot(dir, status string) error {
	done := filepath.Join(dir, bootedFile)
	tmp := done + ".tmp"
	if err := os.WriteFile(tmp, []byte(status+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, done)
}
