package vm

import (
	"fmt"
	"strings"
)

// containerdConfig is the node's containerd configuration: the CRI plugin with runc under
// cgroupfs (the host has no systemd), the standard CNI plugins from Debian's
// containernetworking-plugins, registry mirrors from /etc/containerd/certs.d, and
// restrict_oom_score_adj, since this host's capability set lacks CAP_SYS_RESOURCE and so refuses
// the negative OOM scores the kubelet asks for.
func containerdConfig(sandboxImage string) string {
	return fmt.Sprintf(`version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "/etc/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "/etc/containerd/certs.d"
`, containerdSocket, sandboxImage)
}

// hostsTOML makes url serve registry host's repositories to the node, as containerd's
// certs.d/<host>/hosts.toml does.
func hostsTOML(host, url string) string {
	scheme := "https"
	if strings.HasPrefix(host, "127.") || strings.HasPrefix(host, "localhost") {
		scheme = "http"
	}
	return fmt.Sprintf("server = \"%s://%s\"\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", scheme, host, url)
}
