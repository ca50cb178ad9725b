package vm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// nodeImageBin holds the commands a node image carries that this host has not, or has in
// another shape; it is first on the PATH of the node's cloud-init. It is on the node's own /run.
const nodeImageBin = "/run/node-image/bin"

// Preflight checks of kubeadm that cannot pass in a node of namespaces, skipped by name on every
// `kubeadm init` and `kubeadm join` the node runs, whoever wrote its cloud-init (the local
// ClusterClass, CAPV's vSphere ClusterClass):
var skippedPreflight = []string{
	// This host has cgroup v1, which kubeadm v1.35 refuses unless this check is skipped; the
	// node's kubelet runs with failCgroupV1: false (hostKubeletConfig). The host's kernel
	// modules and configuration, which the check also reads, are the host's to keep.
	"SystemVerification",
}

// nodeKubeProxyConfig is the KubeProxyConfiguration appended to a `kubeadm init` configuration
// that has none: nf_conntrack_max is global and read-only outside the host's network namespace,
// so the node's kube-proxy leaves it alone, as kind's does. kubeadm reads a
// KubeProxyConfiguration only from its configuration file.
const nodeKubeProxyConfig = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
conntrack:
  maxPerCore: 0
`

// writeNodeImage writes the node image's commands: hostnamectl, which sets the node's UTS
// name as systemd-hostnamed sets a VM's, and kubeadm, which is `slipway local node kubeadm`
// (Kubeadm) in front of the node's kubeadm.
func writeNodeImage(exe string, spec Spec) error {
	if err := os.MkdirAll(nodeImageBin, 0o755); err != nil {
		return err
	}
	scripts := map[string]string{
		"hostnamectl": `#!/bin/sh
# A node of slipway's local runtime has no systemd: its host name is its UTS namespace's.
case "$1" in
set-hostname|hostname) if [ -n "$2" ]; then exec hostname "$2"; else exec hostname; fi ;;
"") exec hostname ;;
*) echo "hostnamectl: $1 is not supported on a node of slipway's local runtime (set-hostname, hostname)" >&2; exit 1 ;;
esac
`,
		"kubeadm": fmt.Sprintf("#!/bin/sh\nexec %s local node kubeadm --bin-dir %s -- \"$@\"\n", shellQuote(exe), shellQuote(spec.BinDir)),
	}
	for name, content := range scripts {
		if err := os.WriteFile(filepath.Join(nodeImageBin, name), []byte(content), 0o755); err != nil {
			return err
		}
	}
	return nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Kubeadm runs the kubeadm of binDir with args, as the node's cloud-init calls it: `init` and
// `join` skip the preflight checks a node of namespaces cannot pass, and `init` is given the
// node's KubeProxyConfiguration when its configuration file has none. It replaces the process.
func Kubeadm(binDir string, args []string) error {
	args, err := kubeadmArgs(args, os.ReadFile, os.WriteFile)
	if err != nil {
		return err
	}
	bin := filepath.Join(binDir, "kubeadm")
	return syscall.Exec(bin, append([]string{bin}, args...), os.Environ())
}

// nodeConfigSuffix names the copy of a `kubeadm init` configuration the node completes.
const nodeConfigSuffix = ".node.yaml"

// kubeadmArgs returns the arguments of kubeadm for what the cloud-init asked; read and write
// are the file system's.
func kubeadmArgs(args []string, read func(string) ([]byte, error), write func(string, []byte, os.FileMode) error) ([]string, error) {
	// The subcommand is the first argument that is no flag. Of the phases (`kubeadm init phase
	// …`), only preflight runs the checks.
	sub := -1
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			sub = i
			break
		}
	}
	if sub < 0 || (args[sub] != "init" && args[sub] != "join") {
		return args, nil
	}
	if phase := slices.Index(args[sub+1:], "phase"); phase >= 0 {
		if next := sub + 1 + phase + 1; next >= len(args) || args[next] != "preflight" {
			return args, nil
		}
	}
	// kubeadm refuses checks named beside "all", which skips them too.
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--ignore-preflight-errors="); ok && slices.Contains(strings.Split(strings.ToLower(v), ","), "all") {
			return args, nil
		}
	}
	out := slices.Clone(args)
	if args[sub] == "init" {
		for i, a := range out {
			var config string
			switch {
			case a == "--config" && i+1 < len(out):
				config = out[i+1]
			case strings.HasPrefix(a, "--config="):
				config = strings.TrimPrefix(a, "--config=")
			default:
				continue
			}
			completed, err := completeInitConfig(config, read, write)
			if err != nil {
				return nil, err
			}
			if a == "--config" {
				out[i+1] = completed
			} else {
				out[i] = "--config=" + completed
			}
			break
		}
	}
	flag := "--ignore-preflight-errors=" + strings.Join(skippedPreflight, ",")
	return slices.Insert(out, sub+1, flag), nil
}

// completeInitConfig returns the configuration file kubeadm init is to read: config itself when
// it has a KubeProxyConfiguration, else a copy beside it with the node's appended.
func completeInitConfig(config string, read func(string) ([]byte, error), write func(string, []byte, os.FileMode) error) (string, error) {
	data, err := read(config)
	if err != nil {
		return "", fmt.Errorf("kubeadm's configuration: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "kind: KubeProxyConfiguration" {
			return config, nil
		}
	}
	completed := strings.TrimSuffix(config, filepath.Ext(config)) + nodeConfigSuffix
	joined := append(bytes.TrimRight(data, "\n"), []byte("\n---\n"+nodeKubeProxyConfig)...)
	if err := write(completed, joined, 0o600); err != nil {
		return "", err
	}
	return completed, nil
}
