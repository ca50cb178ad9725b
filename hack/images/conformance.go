package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// conformanceDir is the module that builds Kubernetes' end-to-end suite and its test images'
// Go programs (agnhost), apart from the images slipway ships.
const conformanceDir = "hack/tools/conformance"

// agnhostVersion is the agnhost Kubernetes v1.35.4's suite names (test/utils/image/manifest.go).
const agnhostVersion = "2.59"

// agnhostPrevious is the older agnhost the suite names (AgnhostPrev).
const agnhostPrevious = "2.55"

// sampleAPIServerModule is the aggregated API server the Aggregator's test runs, built at the
// version hack/tools/conformance's replace line gives it, the suite's own.
const sampleAPIServerModule = "k8s.io/sample-apiserver"

// e2eRegistry is where the suite's images are named (its "promoter e2e registry"); real nodes
// pull registry.k8s.io through the local registry.
const e2eRegistry = "registry.k8s.io/e2e-test-images/"

// busyboxLinks are the links to /bin/busybox, one for each of its applets, that busybox's own
// image has in /bin; Debian's busybox-static is the binary.
func busyboxLinks() ([]tarFile, error) {
	out, err := exec.Command("/bin/busybox", "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("the conformance images need Debian's busybox-static (/bin/busybox --list): %w", err)
	}
	files := []tarFile{{name: "bin/", mode: 0o755, dir: true}}
	for _, applet := range strings.Fields(string(out)) {
		if applet != "busybox" {
			files = append(files, tarFile{name: "bin/" + applet, link: "busybox"})
		}
	}
	return files, nil
}

// nginxConf is the nginx image's configuration, as upstream's image has it: workers as user
// nginx, the default page on port 80, both logs on the container's output.
const nginxConf = `user nginx;
worker_processes 1;
error_log /var/log/nginx/error.log warn;
pid /run/nginx.pid;
events {
	worker_connections 1024;
}
http {
	include /etc/nginx/mime.types;
	default_type application/octet-stream;
	access_log /var/log/nginx/access.log;
	sendfile on;
	keepalive_timeout 65;
	server {
		listen 80;
		server_name localhost;
		location / {
			root /usr/share/nginx/html;
			index index.html index.htm;
		}
	}
}
`

// nginxSpec is one of the suite's nginx images (upstream's are nginx 1.14 and 1.15 on Alpine):
// Debian's nginx-light of the given version with its libraries, run as nginx's own image runs it.
func nginxSpec(tag, version string) spec {
	const nginxID = "101"
	files := []tarFile{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd("nginx:x:" + nginxID + ":" + nginxID + ":nginx:/var/lib/nginx:/sbin/nologin\n"))},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnginx:x:" + nginxID + ":\n")},
		{name: "etc/nginx/", mode: 0o755, dir: true},
		{name: "etc/nginx/nginx.conf", mode: 0o644, data: []byte(nginxConf)},
		{name: "var/", mode: 0o755, dir: true},
		{name: "var/lib/", mode: 0o755, dir: true},
		{name: "var/lib/nginx/", mode: 0o755, dir: true},
		{name: "var/log/", mode: 0o755, dir: true},
		{name: "var/log/nginx/", mode: 0o755, dir: true},
		{name: "var/log/nginx/access.log", link: "/dev/stdout"},
		{name: "var/log/nginx/error.log", link: "/dev/stderr"},
		{name: "run/", mode: 0o755, dir: true},
	}
	return spec{ref: e2eRegistry + "nginx:" + tag, root: true, bare: true,
		bin: binary{name: "nginx", file: "usr/sbin/nginx", prebuilt: "/usr/sbin/nginx", source: "debian:nginx-light", version: version},
		// The host layer carries the binary again, with the libraries ldd finds it needs.
		host:  []string{"/usr/sbin/nginx", "/etc/nginx/mime.types", "/usr/share/nginx/html/index.html"},
		files: files, cmd: []string{"nginx", "-g", "daemon off;"},
		title: "Debian's nginx-light " + version + " as the suite's nginx " + tag}
}

// conformanceModule is what `go list -m -f format` says of a module in hack/tools/conformance:
// what, which an empty answer lacks.
func conformanceModule(root, module, format, what string) (string, error) {
	var stderr strings.Builder
	list := exec.Command("go", "list", "-C", filepath.Join(root, conformanceDir), "-m", "-f", format, module)
	list.Stderr = &stderr
	out, err := list.Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return v, nil
	}
	return "", fmt.Errorf("failed to read %s of %s from %s: %v: %s", what, module, conformanceDir, err, strings.TrimSpace(stderr.String()))
}

// debianVersion is the version of an installed Debian package the conformance images carry
// files of, for what.
func debianVersion(pkg, what string) (string, error) {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
	if err != nil {
		return "", fmt.Errorf("the conformance images need Debian's %s for %s (dpkg-query -W %s): %w", pkg, what, pkg, err)
	}
	return string(out), nil
}

// bashAsShell is busybox's links with Debian's bash (carried in the image's host layer) as
// /bin/sh in place of busybox's, without the applets named in dropped.
func bashAsShell(links []tarFile, dropped ...string) []tarFile {
	var files []tarFile
	for _, l := range links {
		if l.name != "bin/sh" && !slices.Contains(dropped, l.name) {
			files = append(files, l)
		}
	}
	return append(files, tarFile{name: "bin/sh", link: "/usr/bin/bash"})
}

// conformanceSpecs are the images of Kubernetes v1.35.4's conformance tests that can be made
// here, named as the suite names them: agnhost (built from its source in k8s.io/kubernetes, on
// busybox's applets with Debian's bash as its shell and Debian's dig, curl and OpenBSD nc, as
// upstream's is on Alpine's busybox, bind-tools, curl and netcat-openbsd), busybox (Debian's
// 1.35 with bash as its shell, where the suite names 1.37), nonroot, kitten and nautilus
// (agnhost's test-webserver serving their pages), nginx 1.14 and 1.15 (Debian's), jessie-dnsutils
// (agnhost's shell and tools), nonewprivs (from its source, setuid), sample-apiserver (from its
// source at the suite's Kubernetes version) with etcd beside it, and pause.
func conformanceSpecs(root string) ([]spec, error) {
	links, err := busyboxLinks()
	if err != nil {
		return nil, err
	}
	k8sDir, err := conformanceModule(root, kubernetesModule, "{{.Dir}}", "its source")
	if err != nil {
		return nil, err
	}
	sampleVersion, err := conformanceModule(root, sampleAPIServerModule, "{{with .Replace}}{{.Version}}{{end}}", "the version its replace line gives")
	if err != nil {
		return nil, err
	}
	busyboxVersion, err := debianVersion("busybox-static", "the shell and tools of busybox's images")
	if err != nil {
		return nil, err
	}
	images := filepath.Join(k8sDir, "test", "images")
	busybox := binary{name: "busybox", file: "bin/busybox", prebuilt: "/bin/busybox", source: "debian:busybox-static", version: busyboxVersion}
	agnhost := binary{name: "agnhost-" + agnhostVersion, file: "agnhost", dir: conformanceDir, pkg: kubernetesModule + "/test/images/agnhost",
		source: kubernetesModule, version: agnhostVersion}
	users := passwd("user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n")
	// agnhost's shell is Debian's bash, not busybox's: Debian builds busybox to run its own
	// applets before any program on the PATH, and its nc applet lacks the flags the suite
	// passes to OpenBSD's nc (-u, -t, -z, -w), which upstream's Alpine image runs.
	shellFiles := append(bashAsShell(links, "bin/nc"),
		// OpenBSD's nc by its own name: Debian's /usr/bin/nc goes through /etc/alternatives
		// to /bin/nc.openbsd, and /bin here is busybox's directory, not a link to /usr/bin.
		tarFile{name: "usr/bin/nc", link: "nc.openbsd"},
		tarFile{name: "bin/busybox", mode: 0o755, path: "/bin/busybox"})
	agnhostFiles := append(slices.Clone(shellFiles),
		tarFile{name: "etc/", mode: 0o755, dir: true},
		tarFile{name: "etc/passwd", mode: 0o644, data: []byte(users)},
		tarFile{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\nuser-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n")},
		tarFile{name: "uploads/", mode: 0o777, dir: true},
		tarFile{name: "localhost.crt", mode: 0o644, path: filepath.Join(images, "agnhost", "porter", "localhost.crt")},
		tarFile{name: "localhost.key", mode: 0o644, path: filepath.Join(images, "agnhost", "porter", "localhost.key")},
		tarFile{name: "agnhost-2", link: "agnhost"})
	for _, f := range agnhostFiles {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return nil, fmt.Errorf("agnhost's image needs %s: %w", f.path, err)
		}
	}
	// The tests run dig, getent, curl and OpenBSD's nc (-t, -u, -z, -w) in agnhost's and
	// jessie-dnsutils' pods, from their shell.
	var netTools []string
	for _, tool := range []string{"/usr/bin/dig", "/usr/bin/getent", "/usr/bin/curl", "/usr/bin/nc.openbsd", "/usr/bin/bash"} {
		if _, err := os.Stat(tool); err != nil {
			return nil, fmt.Errorf("agnhost's image carries %s, as upstream's does, for the DNS and network tests: install Debian's bind9-dnsutils, libc-bin, curl, netcat-openbsd and bash: %w", tool, err)
		}
		netTools = append(netTools, tool)
	}
	nginxVersion, err := debianVersion("nginx-light", "the suite's nginx")
	if err != nil {
		return nil, err
	}
	nginx := func(tag string) spec { return nginxSpec(tag, nginxVersion) }
	webserver := func(name string) spec {
		html := filepath.Join(images, name, "html")
		files := append(slices.Clone(agnhostFiles),
			tarFile{name: name + ".jpg", mode: 0o644, path: filepath.Join(html, name+".jpg")},
			tarFile{name: "data.json", mode: 0o644, path: filepath.Join(html, "data.json")})
		return spec{ref: e2eRegistry + name + ":1.7", bin: agnhost, root: true, host: netTools, files: files, cmd: []string{"test-webserver"},
			title: name + " 1.7: agnhost " + agnhostVersion + "'s test-webserver serving its page"}
	}
	return []spec{
		{ref: e2eRegistry + "agnhost:" + agnhostVersion, bin: agnhost, root: true, host: netTools, files: agnhostFiles, cmd: []string{"pause"},
			title: "agnhost " + agnhostVersion + " on busybox's applets with Debian's bash, dig, curl and nc"},
		// The suite's previous agnhost, which its rollout tests change an image to and from: the
		// same program (2.55's source is not in v1.35.4's module), an image of its own.
		{ref: e2eRegistry + "agnhost:" + agnhostPrevious, bin: agnhost, root: true, host: netTools, files: agnhostFiles, cmd: []string{"pause"},
			title: "agnhost " + agnhostVersion + "'s program as the suite's previous agnhost, " + agnhostPrevious},
		// busybox's own shell in Debian's 1.35 drops from the environment every variable whose
		// name is not a shell name ("data-1", "1_var"), which the suite's ConfigMap and Secret
		// tests read back with `sh -c env`; 1.37's keeps them, and so does bash.
		{ref: e2eRegistry + "busybox:1.37.0-1", bin: busybox, root: true, bare: true, host: []string{"/usr/bin/bash"}, files: bashAsShell(links), cmd: []string{"sh"},
			title: "Debian's busybox-static " + busyboxVersion + " with Debian's bash as its shell, as the suite's busybox 1.37"},
		{ref: e2eRegistry + "nonroot:1.4", bin: busybox, user: "1234", bare: true, host: []string{"/usr/bin/bash"}, files: bashAsShell(links), cmd: []string{"sh"},
			title: "busybox with bash as its shell, run as user 1234, as the nonroot test image"},
		nginx("1.14-4"),
		nginx("1.15-4"),
		// The DNS tests' other querier (upstream's is Debian jessie with dnsutils): the same
		// shell and tools as agnhost's.
		{ref: e2eRegistry + "jessie-dnsutils:1.7", bin: busybox, root: true, bare: true, host: netTools, files: shellFiles, cmd: []string{"sh"},
			title: "busybox's applets with Debian's bash, dig, getent, curl and nc, as the suite's jessie-dnsutils"},
		// AllowPrivilegeEscalation's tests: a setuid program printing its effective uid.
		{ref: e2eRegistry + "nonewprivs:1.3", root: true, bin: binary{name: "nonewprivs", file: "usr/local/bin/nnp", dir: conformanceDir,
			pkg: kubernetesModule + "/test/images/nonewprivs", source: kubernetesModule, version: "1.3", setuid: true},
			title: "nonewprivs 1.3: nnp from its source, setuid root"},
		// The Aggregator's test runs sample-apiserver, an aggregated API server, with etcd in its
		// pod. Upstream's 1.29.2, which the suite names, is sample-apiserver v0.29.2's code; this
		// one is the version the suite itself is built with. It serves on port 443: root.
		{ref: e2eRegistry + "sample-apiserver:1.29.2", root: true, bin: binary{name: "sample-apiserver-" + sampleVersion, file: "sample-apiserver",
			dir: conformanceDir, pkg: sampleAPIServerModule, source: sampleAPIServerModule, version: sampleVersion},
			title: "sample-apiserver " + sampleVersion + " from its source, as the suite's 1.29.2"},
		{ref: "registry.k8s.io/etcd:3.6.6-0", root: true, bin: etcdBinary, title: "etcd " + etcdVersion + ", as the suite's 3.6.6-0"},
		webserver("kitten"),
		webserver("nautilus"),
		// The suite runs pause as a container of its own, by upstream's name.
		{ref: "registry.k8s.io/pause:3.10.1", root: true, bin: binary{name: "pause", file: "pause", dir: ".", pkg: "./hack/images/pause", source: slipwayModule},
			title: "pause (slipway's, as Kubernetes' build/pause)"},
	}, nil
}
